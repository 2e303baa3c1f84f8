package export

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/envsched/envsched/storage"
)

// What names a kind of record to export.
type What string

// The kinds of record.
const (
	Rollouts   What = "rollouts"   // one line per stored rollout
	Tasks      What = "tasks"      // one line per task: catalogue metadata and statistics
	Batches    What = "batches"    // JSON lines: one stored answer per line; CSV: one row per chosen task
	Quarantine What = "quarantine" // one line per quarantined line: where it was and why
)

// Whats lists every kind, for help texts.
var Whats = []What{Rollouts, Tasks, Batches, Quarantine}

// Format names an output format.
type Format string

// The formats.
const (
	JSONL Format = "jsonl" // one JSON object per line
	CSV   Format = "csv"   // a header row, then one row per record (RFC 4180)
)

// ErrUnknown means a What or Format that this package does not know.
var ErrUnknown = errors.New("unknown export kind or format")

// Write writes every record of kind what held in r's snapshot to w, in format, and returns how
// many records it wrote. cfg is the database's configuration (for the reward scale).
func Write(w io.Writer, r *storage.Reader, cfg storage.Config, what What, format Format) (int64, error) {
	if format != JSONL && format != CSV {
		return 0, fmt.Errorf("format %q (use jsonl or csv): %w", format, ErrUnknown)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	out := newSink(bw, format)
	var err error
	switch what {
	case Rollouts:
		err = writeRollouts(out, r)
	case Tasks:
		err = writeTasks(out, r, cfg.Reward)
	case Batches:
		err = writeBatches(out, r)
	case Quarantine:
		err = writeQuarantine(out, r)
	default:
		return 0, fmt.Errorf("export %q (use %s): %w", what, whatList(), ErrUnknown)
	}
	if err == nil {
		err = out.flush(headers[what])
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return out.n, fmt.Errorf("export %s: %w", what, err)
	}
	return out.n, nil
}

func whatList() string {
	names := make([]string, len(Whats))
	for i, w := range Whats {
		names[i] = string(w)
	}
	return strings.Join(names, ", ")
}

// sink writes records as JSON lines or CSV rows; the CSV header is written before the first row.
type sink struct {
	w      *bufio.Writer
	format Format
	csv    *csv.Writer
	header bool
	n      int64
}

func newSink(w *bufio.Writer, format Format) *sink {
	s := &sink{w: w, format: format}
	if format == CSV {
		s.csv = csv.NewWriter(w)
	}
	return s
}

// json writes v as one line.
func (s *sink) json(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	s.n++
	s.w.Write(data)
	return s.w.WriteByte('\n')
}

// raw writes data, a JSON document, compacted into one line.
func (s *sink) raw(data []byte) error {
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		return fmt.Errorf("stored answer is not JSON: %w", err)
	}
	s.n++
	buf.WriteByte('\n')
	_, err := s.w.Write(buf.Bytes())
	return err
}

// row writes one CSV row, with header before the first.
func (s *sink) row(header, fields []string) error {
	if !s.header {
		s.header = true
		if err := s.csv.Write(header); err != nil {
			return err
		}
	}
	s.n++
	for i, f := range fields {
		fields[i] = textCell(controlFree(f))
	}
	return s.csv.Write(fields)
}

// numberCell matches a plain decimal number, which a spreadsheet shows as a number.
var numberCell = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// textCell guards a CSV cell against spreadsheet formula injection: a cell that begins with
// '=', '+', '-', '@', a tab or a carriage return, and is not a plain number, gets a leading "'"
// so that a spreadsheet shows it as text instead of evaluating it (an environment, task or file
// name such as "=HYPERLINK(...)" comes from the trainer's files). Numbers, negative ones
// included, are left as they are. JSON lines are never changed.
func textCell(f string) string {
	if f == "" || !strings.ContainsRune("=+-@\t\r", rune(f[0])) || numberCell.MatchString(f) {
		return f
	}
	return "'" + f
}

// controlFree returns f with the bytes a terminal acts on written out as visible escapes: C0
// control characters other than tab, newline and carriage return (ESC among them), DEL and the
// C1 controls U+0080-U+009F as \xNN or \uNNNN, and bytes that are not UTF-8 as \xNN. A CSV
// printed to a terminal (export writes to standard output by default) or shown with cat or less
// -r carried a task name's or quarantined line's raw ESC sequences to the terminal, which ran
// them (clear the screen, set the title, write the clipboard); JSON lines escape them already.
// Other text is returned unchanged.
func controlFree(f string) string {
	clean := true
	for i, r := range f {
		if isHazard(f, i, r) {
			clean = false
			break
		}
	}
	if clean {
		return f
	}
	var b strings.Builder
	for i, r := range f {
		switch {
		case r == utf8.RuneError && !validRuneAt(f, i):
			fmt.Fprintf(&b, `\x%02x`, f[i])
		case isHazard(f, i, r) && r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case isHazard(f, i, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isHazard reports whether rune r at byte i of f is one controlFree writes out.
func isHazard(f string, i int, r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
		return true
	}
	return r == utf8.RuneError && !validRuneAt(f, i)
}

// validRuneAt reports whether f holds a real U+FFFD at byte i (not an invalid byte).
func validRuneAt(f string, i int) bool {
	_, n := utf8.DecodeRuneInString(f[i:])
	return n == 3
}

// headers are the CSV header rows of each kind.
var headers = map[What][]string{
	Rollouts: rolloutHeader, Tasks: taskHeader, Batches: batchHeader, Quarantine: quarantineHeader,
}

// flush ends the output; a CSV with no rows still gets its header, so that a reader sees the
// columns of an empty export instead of an empty file.
func (s *sink) flush(header []string) error {
	if s.csv == nil {
		return nil
	}
	if !s.header {
		s.header = true
		if err := s.csv.Write(header); err != nil {
			return err
		}
	}
	s.csv.Flush()
	return s.csv.Error()
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
func itoa(i int64) string   { return strconv.FormatInt(i, 10) }
