package catalog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/envsched/envsched/record"
)

// checkJSONL reads a JSON lines catalogue. A last line without a newline counts as a row here
// (the import command ends it with one when it copies the file).
func checkJSONL(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open catalogue %s: %w", path, err)
	}
	defer f.Close()
	rep, err := CheckJSONL(f)
	if err != nil {
		return nil, fmt.Errorf("read catalogue %s: %w", path, err)
	}
	return rep, nil
}

// CheckJSONL sorts the lines of r into good rows, bad rows and blank lines. A line longer than
// record.MaxLine is a bad row (line too long) and is never held whole: it is skipped to its
// newline (a sparse 10 GB file, one line of zeros, was read into memory whole).
func CheckJSONL(r io.Reader) (*Report, error) {
	rep := &Report{Format: FormatJSONL}
	br := bufio.NewReaderSize(r, 1<<20)
	var line []byte
	for n := 1; ; n++ {
		line = line[:0]
		long := false
		var err error
		for {
			var part []byte
			part, err = br.ReadSlice('\n')
			if !long && len(line)+len(part) > record.MaxLine {
				long, line = true, line[:0]
			}
			if !long {
				line = append(line, part...)
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		switch {
		case long:
			rep.Bad = append(rep.Bad, BadRow{N: n, Reason: record.ReasonTooLong})
		case len(line) > 0:
			rep.add(n, line)
		}
		if errors.Is(err, io.EOF) {
			return rep, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// add sorts one line (with or without its newline) into rep.
func (rep *Report) add(n int, line []byte) {
	if record.IsBlank(line) {
		rep.Blank++
		return
	}
	t, err := record.ParseTask(line)
	var bad *record.BadLineError
	switch {
	case errors.As(err, &bad):
		rep.Bad = append(rep.Bad, BadRow{N: n, Reason: bad.Reason})
	case err != nil:
		rep.Bad = append(rep.Bad, BadRow{N: n, Reason: err.Error()})
	default:
		row := Row{N: n, Task: t}
		if !rep.dropLines {
			row.Line = append([]byte(nil), bytes.TrimRight(line, "\r\n")...)
		}
		rep.Rows = append(rep.Rows, row)
	}
}
