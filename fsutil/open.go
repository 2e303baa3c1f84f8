package fsutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// NotRegularError is returned by OpenRegular for a path that is not a regular file: a FIFO, a
// socket, a device, a folder, or (the last component) a symbolic link. Nothing was read from it.
type NotRegularError struct {
	Path string
	Mode fs.FileMode // the type bits of what was found (fs.ModeSymlink for a link)
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is not a regular file (%s)", e.Path, TypeName(e.Mode))
}

// TypeName names the type of a file mode in words a user knows: "named pipe (FIFO)", "symbolic
// link", "folder", "socket", "device", or "regular file".
func TypeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m.IsDir():
		return "folder"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		return "device"
	case m.IsRegular():
		return "regular file"
	}
	return "irregular file"
}

// OpenRegular opens path for reading only when it is a regular file, and never blocks in open:
//
//   - the open itself is non-blocking (O_NONBLOCK), so a FIFO with no writer cannot hang it;
//   - a symbolic link as the last component is not followed (O_NOFOLLOW); folders above it are;
//   - the opened file is checked with fstat (no race between a check and the open), and anything
//     but a regular file is closed again and refused with a *NotRegularError;
//   - the non-blocking flag is then cleared, so reads behave as on any file.
//
// A missing file gives an error satisfying errors.Is(err, fs.ErrNotExist). Other errors
// (permission denied, too many levels of links above) are wrapped *fs.PathError values.
func OpenRegular(path string) (*os.File, error) {
	fd, err := openNonblock(path)
	if errors.Is(err, syscall.ELOOP) {
		return nil, &NotRegularError{Path: path, Mode: fs.ModeSymlink}
	}
	if errors.Is(err, syscall.ENXIO) { // a socket, or a device with nothing behind it
		if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
			return nil, &NotRegularError{Path: path, Mode: fi.Mode().Type()}
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return nil, &NotRegularError{Path: path, Mode: modeType(st.Mode)}
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, &fs.PathError{Op: "fcntl", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// openNonblock is open(2) with O_RDONLY|O_NONBLOCK|O_NOFOLLOW|O_CLOEXEC, retried on EINTR.
func openNonblock(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// modeType turns the S_IFMT bits of a stat into fs.FileMode type bits.
func modeType(m uint32) fs.FileMode {
	switch m & syscall.S_IFMT {
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	}
	return fs.ModeIrregular
}

// IsNotRegular reports whether err says a path was refused for not being a regular file.
func IsNotRegular(err error) bool {
	var nr *NotRegularError
	return errors.As(err, &nr)
}

// ReadRegular reads the whole of path when it is a regular file (see OpenRegular): the
// os.ReadFile of a file in a folder others write to, which a FIFO put there cannot block.
func ReadRegular(path string) ([]byte, error) {
	return ReadRegularMax(path, -1)
}

// ReadRegularMax is ReadRegular for a file envsched itself writes small (status.json, a
// snapshot's error): a file of more than max bytes (max < 0: no bound) is an error that says so,
// and is not read, so that whatever was put in its place (a sparse 8 GB file) cannot exhaust
// memory.
func ReadRegularMax(path string, max int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if max >= 0 {
		if fi, err := f.Stat(); err == nil && fi.Size() > max {
			return nil, fmt.Errorf("read %s: %d bytes, more than the %d such a file can hold: not envsched's", path, fi.Size(), max)
		}
	}
	r := io.Reader(f)
	if max >= 0 {
		r = io.LimitReader(f, max)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, nil
}

// IsOwnOutput reports whether fi (of an open file) is this process's standard output or
// standard error: a log redirected into a folder envsched reads. Read as input, each of its
// lines is refused and logged, which writes a line into the file, read in turn, without end.
func IsOwnOutput(fi fs.FileInfo) bool {
	for _, fd := range []string{"/dev/fd/1", "/dev/fd/2"} {
		if sfi, err := os.Stat(fd); err == nil && sfi.Mode().IsRegular() && os.SameFile(fi, sfi) {
			return true
		}
	}
	return false
}
