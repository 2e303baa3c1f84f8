package ingest

import (
	"bytes"
	"errors"
	"io"
)

// lineKind is what lineReader.next found.
type lineKind uint8

const (
	lineComplete lineKind = iota // a line ending in '\n' (the newline included)
	lineTooLong                  // a line longer than the limit, skipped up to and including its '\n'
)

// lineReader frames the bytes of one file generation into newline-terminated lines, from a start
// offset. The bytes after the last newline are an unfinished line: next reports io.EOF and
// Offset stays before them, so that they are read again once they are complete. A line longer
// than max is never held whole: it is skipped to its newline and reported with its first bytes.
type lineReader struct {
	r     io.Reader
	max   int    // longest line kept whole, newline included
	buf   []byte // buf[start:end] is read but not yet framed; buf[start] is at offset off
	start int
	end   int
	off   int64 // file offset of buf[start]
	eof   bool

	skipping bool   // inside a line longer than max
	skipOff  int64  // its offset
	head     []byte // its first bytes
	// reported says the line being skipped was returned already (found without its newline at
	// the end of the file, or before this reader started: resume): Offset then moves on with
	// the skip, and the line's end is not returned again.
	reported bool

	tail  []byte // the last bytes framed (up to fingerprintLen), ending at Offset
	stail []byte // the last bytes of the line being skipped; joins tail when its newline is found

	// whole, when set, says whether the bytes after the last newline at the end of the file are
	// a whole record all the same (a catalogue row whose file does not end in a newline): next
	// then returns them as a complete line, and Offset moves past them.
	whole func(tail []byte) bool

	// tick, when set, is called with the offset reached every tickEvery bytes of a line being
	// skipped (which returns nothing for as long as it lasts); an error from it stops next.
	tick      func(off int64) error
	tickEvery int64 // 0: tickEvery
	lastTick  int64
}

// tickEvery is how many bytes of a skipped line pass between two calls of lineReader.tick.
const tickEvery = 64 << 20

// headLen is how many first bytes of a skipped line are kept for the quarantine.
const headLen = 256

func newLineReader(r io.Reader, off int64, max, bufSize int) *lineReader {
	return &lineReader{r: r, max: max, off: off, buf: make([]byte, bufSize)}
}

// resumeLongLine makes the reader start inside a too-long line returned before (InLongLine):
// it skips to the line's newline without returning it. tail is the bytes before the offset.
func (lr *lineReader) resumeLongLine(tail []byte) {
	lr.skipping, lr.reported, lr.skipOff = true, true, lr.off
	lr.stail = window(lr.stail[:0], tail)
}

// inLongLine reports whether Offset is inside a too-long line already returned.
func (lr *lineReader) inLongLine() bool { return lr.skipping && lr.reported }

// keep adds framed bytes to the tail window.
func (lr *lineReader) keep(b []byte) { lr.tail = window(lr.tail, b) }

// window appends b to w and keeps the last fingerprintLen bytes.
func window(w, b []byte) []byte {
	if len(b) >= fingerprintLen {
		return append(w[:0], b[len(b)-fingerprintLen:]...)
	}
	w = append(w, b...)
	if n := len(w); n > fingerprintLen {
		w = w[:copy(w, w[n-fingerprintLen:])]
	}
	return w
}

// Tail returns a copy of the last bytes before Offset (up to fingerprintLen), given that tail
// held those before the start offset.
func (lr *lineReader) Tail() []byte {
	if lr.inLongLine() {
		return append([]byte(nil), lr.stail...)
	}
	return append([]byte(nil), lr.tail...)
}

// Offset is the file offset just after the last line returned: everything before it has been
// framed.
func (lr *lineReader) Offset() int64 {
	if lr.skipping && !lr.reported {
		return lr.skipOff
	}
	return lr.off
}

// next returns the next line and its offset. For lineTooLong, line holds the first bytes only.
// The line is valid until the next call. At the end of the complete lines it returns io.EOF;
// other errors are the reader's.
func (lr *lineReader) next() (line []byte, off int64, kind lineKind, err error) {
	for {
		if lr.skipping {
			done, err := lr.skip()
			switch {
			case err == nil && !done:
				if err := lr.ticked(); err != nil {
					return nil, 0, 0, err
				}
				continue
			case errors.Is(err, io.EOF) && !lr.reported:
				// Too long whatever follows: returned now, so that its bytes are not read
				// again from its start at every scan until its newline comes.
				lr.reported = true
				return lr.head, lr.skipOff, lineTooLong, nil
			case err != nil:
				return nil, 0, 0, err
			case lr.reported:
				lr.reported = false // its end, returned before
				continue
			}
			return lr.head, lr.skipOff, lineTooLong, nil
		}
		if i := bytes.IndexByte(lr.buf[lr.start:lr.end], '\n'); i >= 0 {
			return lr.take(i + 1)
		}
		if lr.end-lr.start >= lr.max {
			lr.startSkip()
			continue
		}
		if err := lr.fill(); err != nil {
			if errors.Is(err, io.EOF) && lr.whole != nil && lr.end > lr.start && lr.whole(lr.buf[lr.start:lr.end]) {
				return lr.take(lr.end - lr.start) // a whole row without its newline (see whole)
			}
			return nil, 0, 0, err
		}
	}
}

func (lr *lineReader) take(n int) ([]byte, int64, lineKind, error) {
	line, off := lr.buf[lr.start:lr.start+n], lr.off
	lr.keep(line)
	if n > lr.max {
		lr.head = append(lr.head[:0], line[:min(n, headLen)]...)
		line = lr.head
	}
	lr.start += n
	lr.off += int64(n)
	if n > lr.max {
		return line, off, lineTooLong, nil
	}
	return line, off, lineComplete, nil
}

// ticked calls tick once tickEvery bytes passed since the last call (or the skip's start).
func (lr *lineReader) ticked() error {
	if lr.tick == nil {
		return nil
	}
	if lr.lastTick < lr.skipOff {
		lr.lastTick = lr.skipOff
	}
	every := lr.tickEvery
	if every <= 0 {
		every = tickEvery
	}
	if lr.off-lr.lastTick < every {
		return nil
	}
	lr.lastTick = lr.off
	return lr.tick(lr.off)
}

// startSkip enters skip mode for the line at buf[start:], which has no newline within max bytes.
func (lr *lineReader) startSkip() {
	lr.skipping, lr.skipOff = true, lr.off
	lr.head = append(lr.head[:0], lr.buf[lr.start:lr.start+min(lr.end-lr.start, headLen)]...)
	lr.stail = window(lr.stail[:0], lr.buf[lr.start:lr.end])
	lr.off += int64(lr.end - lr.start)
	lr.start, lr.end = 0, 0
}

// skip drops bytes up to and including the next newline; done reports that it was found.
func (lr *lineReader) skip() (done bool, err error) {
	if i := bytes.IndexByte(lr.buf[lr.start:lr.end], '\n'); i >= 0 {
		lr.stail = window(lr.stail, lr.buf[lr.start:lr.start+i+1])
		lr.keep(lr.stail)
		lr.start += i + 1
		lr.off += int64(i + 1)
		lr.skipping = false
		return true, nil
	}
	lr.stail = window(lr.stail, lr.buf[lr.start:lr.end])
	lr.off += int64(lr.end - lr.start)
	lr.start, lr.end = 0, 0
	if err := lr.jumpHole(); err != nil {
		return false, err
	}
	return false, lr.fill()
}

// nulTail is the window of bytes a skipped hole leaves before the offset.
var nulTail [fingerprintLen]byte

// jumpHole moves past a hole at the reader's position (NUL bytes a sparse file does not store),
// when its source can find one (holeSkipper). A hole holds no newline, so a line being skipped
// goes on past it unread: a sparse file of 10 GB without a newline was read byte by byte, for
// seconds, while every request waited. Called only with the buffer drained, when the source's
// position is Offset's.
func (lr *lineReader) jumpHole() error {
	h, ok := lr.r.(holeSkipper)
	if !ok || lr.eof {
		return nil
	}
	n, err := h.skipHole()
	if err != nil || n == 0 {
		return err
	}
	lr.off += n
	lr.stail = window(lr.stail, nulTail[:min(n, fingerprintLen)])
	return nil
}

// fill reads more bytes, moving or growing the buffer as needed. io.EOF means nothing more.
func (lr *lineReader) fill() error {
	if lr.eof {
		return io.EOF
	}
	if lr.start > 0 {
		lr.end = copy(lr.buf, lr.buf[lr.start:lr.end])
		lr.start = 0
	}
	if lr.end == len(lr.buf) {
		grown := make([]byte, min(2*len(lr.buf), lr.max+1))
		lr.end = copy(grown, lr.buf[:lr.end])
		lr.buf = grown
	}
	n, err := lr.r.Read(lr.buf[lr.end:])
	lr.end += n
	switch {
	case errors.Is(err, io.EOF) || (n == 0 && err == nil):
		lr.eof = true // the file may grow later: the next scan reads on from Offset
		if n > 0 {
			return nil
		}
		return io.EOF
	default:
		return err
	}
}
