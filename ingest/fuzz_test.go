package ingest

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// chunkReader returns its data in reads of the given sizes, cycling.
type chunkReader struct {
	data  []byte
	sizes []byte
	i     int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(c.sizes) > 0 {
		n = int(c.sizes[c.i%len(c.sizes)])%17 + 1
		c.i++
	}
	n = min(n, len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// framed is one line as the reference framing sees it.
type framed struct {
	off     int64
	line    string // the whole line, newline included
	tooLong bool
}

// referenceFrames splits data the obvious way: every '\n'-terminated line, longer than max or
// not; the bytes after the last newline are not a line, unless there are max of them or more:
// then they are a line too long, whatever follows, and consumed.
func referenceFrames(data []byte, max int) (out []framed, end int64) {
	off := 0
	for {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 && len(data)-off >= max {
			return append(out, framed{int64(off), string(data[off:]), true}), int64(len(data))
		}
		if i < 0 {
			return out, int64(off)
		}
		l := data[off : off+i+1]
		out = append(out, framed{int64(off), string(l), len(l) > max})
		off += i + 1
	}
}

// FuzzLineFraming checks the line reader against the reference framing for any bytes, any read
// sizes, any buffer size and line limit: the same lines at the same offsets, long lines reported
// with a prefix of their bytes, and the unfinished tail never consumed.
func FuzzLineFraming(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc"), []byte{1, 2, 3}, uint8(4), uint8(8))
	f.Add([]byte("{\"env\":\"e\"}\r\n\n  \nxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nend\n"), []byte{16}, uint8(1), uint8(10))
	f.Add([]byte("no newline at all"), []byte{0}, uint8(2), uint8(3))
	f.Add([]byte("\n\n\n"), []byte{}, uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, data, sizes []byte, buf, max uint8) {
		maxLine := int(max)%64 + 1
		lr := newLineReader(&chunkReader{data: data, sizes: sizes}, 0, maxLine, int(buf)%32+1)
		want, end := referenceFrames(data, maxLine)
		for i := 0; ; i++ {
			line, off, kind, err := lr.next()
			if errors.Is(err, io.EOF) {
				if i != len(want) {
					t.Fatalf("%d lines framed, reference has %d", i, len(want))
				}
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if i >= len(want) {
				t.Fatalf("line %d at %d is beyond the reference's %d lines", i, off, len(want))
			}
			w := want[i]
			if off != w.off || (kind == lineTooLong) != w.tooLong {
				t.Fatalf("line %d: offset %d too long %v; reference %d %v", i, off, kind == lineTooLong, w.off, w.tooLong)
			}
			if !w.tooLong && string(line) != w.line {
				t.Fatalf("line %d: %q, reference %q", i, line, w.line)
			}
			if w.tooLong && (!bytes.HasPrefix([]byte(w.line), line) || len(line) == 0 || len(line) > headLen) {
				t.Fatalf("long line %d: head %q is not a prefix of %q of at most %d bytes", i, line, w.line, headLen)
			}
		}
		if lr.Offset() != end {
			t.Fatalf("offset after the last line %d, reference %d", lr.Offset(), end)
		}
	})
}
