package ingest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// holeSkipper is a source of lines that can jump over a hole at its position: a run of a sparse
// file that the file system does not store and that reads as NUL bytes.
type holeSkipper interface {
	// skipHole moves the source past the hole that starts at its position, if any, and returns
	// how many bytes it skipped (0 when the next byte is data, or when it cannot tell).
	skipHole() (int64, error)
}

// fileSource reads a file from an offset, up to an optional limit (the size a full scan listed
// it with), and skips holes on request. It reads with pread, so the file's own offset is unused.
type fileSource struct {
	f     *os.File
	off   int64 // the file offset of the next byte read
	limit int64 // read nothing at or after this offset; negative: to the end of the file
}

// Read reads from the source's offset; io.EOF at the limit or at the end of the file.
func (s *fileSource) Read(p []byte) (int, error) {
	if s.limit >= 0 {
		if s.off >= s.limit {
			return 0, io.EOF
		}
		p = p[:min(int64(len(p)), s.limit-s.off)]
	}
	n, err := s.f.ReadAt(p, s.off)
	s.off += int64(n)
	return n, err
}

// seekData and seekHole are lseek's SEEK_DATA and SEEK_HOLE (Linux, the BSDs, Solaris): the
// next offset holding data, and the next offset in a hole (the end of the file counts as one).
const (
	seekData = 3
	seekHole = 4
)

// skipHole implements holeSkipper with lseek(SEEK_DATA). A file system that keeps no holes
// reports data everywhere, and one that does not know SEEK_DATA says EINVAL: nothing is
// skipped. ENXIO means no data from the offset to the end: the rest of the file is a hole.
func (s *fileSource) skipHole() (int64, error) {
	data, err := s.f.Seek(s.off, seekData)
	switch {
	case errors.Is(err, syscall.ENXIO):
		fi, err := s.f.Stat()
		if err != nil {
			return 0, fmt.Errorf("stat %s: %w", s.f.Name(), err)
		}
		data = fi.Size()
	case err != nil:
		return 0, nil // cannot tell: read on
	}
	if s.limit >= 0 {
		data = min(data, s.limit)
	}
	if data <= s.off {
		return 0, nil
	}
	n := data - s.off
	s.off = data
	return n, nil
}
