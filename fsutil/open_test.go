package fsutil

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOpenRegular opens every kind of thing a trainer's folder can hold; only regular files
// open, and nothing blocks (a FIFO with no writer would hang a plain open forever).
func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "reg.jsonl")
	if err := os.WriteFile(reg, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(reg, link); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub.jsonl")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.jsonl")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	cases := []struct {
		name string
		path string
		mode fs.FileMode // type refused; 0: opens
		gone bool
	}{
		{"regular", reg, 0, false},
		{"fifo", fifo, fs.ModeNamedPipe, false},
		{"link to a regular file", link, fs.ModeSymlink, false},
		{"folder", sub, fs.ModeDir, false},
		{"socket", sock, fs.ModeSocket, false},
		{"device", "/dev/null", fs.ModeDevice | fs.ModeCharDevice, false},
		{"missing", filepath.Join(dir, "nope"), 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := openWithin(t, c.path)
			switch {
			case c.gone:
				if !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("err = %v, want not exist", err)
				}
			case c.mode != 0:
				var nr *NotRegularError
				if !errors.As(err, &nr) || nr.Mode != c.mode || !IsNotRegular(err) {
					t.Fatalf("err = %v, want *NotRegularError of mode %v", err, c.mode)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				data, err := io.ReadAll(f)
				if err != nil || string(data) != "hello\n" {
					t.Fatalf("read %q, %v", data, err)
				}
				flags, err := fcntlFlags(f)
				if err != nil || flags&syscall.O_NONBLOCK != 0 {
					t.Fatalf("flags %#x, %v: O_NONBLOCK not cleared", flags, err)
				}
			}
		})
	}
}

// openWithin runs OpenRegular and fails the test when it does not return within 10 s (a
// blocking open of a FIFO never returns; the goroutine is then left behind).
func openWithin(t *testing.T, path string) (*os.File, error) {
	t.Helper()
	type res struct {
		f   *os.File
		err error
	}
	ch := make(chan res, 1)
	go func() { f, err := OpenRegular(path); ch <- res{f, err} }()
	select {
	case r := <-ch:
		return r.f, r.err
	case <-time.After(10 * time.Second):
		t.Fatalf("OpenRegular(%s) blocked", path)
		return nil, nil
	}
}

func fcntlFlags(f *os.File) (int, error) {
	sc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var flags int
	var ferr error
	err = sc.Control(func(fd uintptr) {
		r, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		flags = int(r)
		if e != 0 {
			ferr = e
		}
	})
	if err == nil {
		err = ferr
	}
	return flags, err
}

// TestReadRegularMaxRefusesHugeFiles: a file larger than the bound (a sparse 8 GB status.json)
// is refused without being read, saying how large it is; a file within it is read whole.
func TestReadRegularMaxRefusesHugeFiles(t *testing.T) {
	dir := t.TempDir()
	huge, small := filepath.Join(dir, "huge"), filepath.Join(dir, "small")
	if err := os.WriteFile(huge, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, 8<<30); err != nil {
		t.Skipf("no sparse file: %v", err)
	}
	if err := os.WriteFile(small, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRegularMax(huge, 1<<20); err == nil || !strings.Contains(err.Error(), "8589934592 bytes") {
		t.Errorf("huge file: %v; want refused with its size", err)
	}
	if data, err := ReadRegularMax(small, 5); err != nil || string(data) != "12345" {
		t.Errorf("small file: %q, %v", data, err)
	}
	if _, err := ReadRegularMax(small, 4); err == nil {
		t.Error("a file one byte over the bound was read")
	}
}
