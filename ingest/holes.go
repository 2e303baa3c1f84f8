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
	// prev, when not nil, are the bytes just before off as they were read (at most
	// continuityLen): each chunk is returned only when they are still there after it was read
	// (continues). broken is set when they were not.
	prev   []byte
	broken bool
}

// Read reads from the source's offset; io.EOF at the limit or at the end of the file, and
// where the file was rewritten under the read (continues).
func (s *fileSource) Read(p []byte) (int, error) {
	if s.broken {
		return 0, io.EOF
	}
	if s.limit >= 0 {
		if s.off >= s.limit {
			return 0, io.EOF
		}
		p = p[:min(int64(len(p)), s.limit-s.off)]
	}
	n, err := s.f.ReadAt(p, s.off)
	if n > 0 && s.prev != nil {
		if !s.continues() {
			s.broken = true
			return 0, io.EOF
		}
		s.prev = lastBytes(s.prev, p[:n])
	}
	s.off += int64(n)
	return n, err
}

// continues reports whether the bytes just before the chunk read at off are still those read
// before it. A file rewritten in place (truncated, then written again longer) while it was being
// read gave the read its new bytes from the old position on: those lines counted, and the next
// scan, seeing the new content, read it again from its start and counted them twice; or, when
// the new content began with the same 64 bytes as the old, never read the new lines before that
// position at all. Checked after the chunk was read: a writer that rewrites from the start had
// to pass the bytes before off to put new bytes after it, so a chunk holding any new byte fails,
// unless the new content has the same continuityLen bytes there.
// The read then stops there, and the next scan's content check starts a new generation.
func (s *fileSource) continues() bool {
	if len(s.prev) == 0 || s.off < int64(len(s.prev)) {
		return true
	}
	b := make([]byte, len(s.prev))
	k, err := s.f.ReadAt(b, s.off-int64(len(s.prev)))
	return (err == nil || err == io.EOF) && k == len(b) && string(b) == string(s.prev)
}

// continuityLen is how many bytes before each chunk continues compares: more than the 64 of a
// fingerprint, since a chunk ends anywhere in a line, and 64 bytes inside the text lines share
// (a prompt, padding) read alike in the old content and the new.
const continuityLen = 4096

// lastBytes returns the last continuityLen bytes of prev followed by chunk, in a new slice.
func lastBytes(prev, chunk []byte) []byte {
	if len(chunk) >= continuityLen {
		return append([]byte(nil), chunk[len(chunk)-continuityLen:]...)
	}
	keep := min(len(prev), continuityLen-len(chunk))
	return append(append([]byte(nil), prev[len(prev)-keep:]...), chunk...)
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
	if s.prev != nil {
		s.prev = []byte{} // a hole's zeros before it: nothing to compare the next chunk by
	}
	return n, nil
}
