package fsutil

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLockHolders: the process holding a flock on a file is named, once; a file nobody locks
// has no holder, nor has a file that is gone.
func TestLockHolders(t *testing.T) {
	if _, err := os.Stat("/proc/locks"); err != nil {
		t.Skip("no /proc/locks")
	}
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if h := LockHolders(path); h != nil {
		t.Fatalf("unlocked file: holders %v", h)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	g, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := unix.Flock(int(g.Fd()), unix.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	h := LockHolders(path)
	if len(h) != 1 || h[0].PID != os.Getpid() || h[0].Command == "" {
		t.Fatalf("holders %v; want this process (%d) once, with its command", h, os.Getpid())
	}
	if h := LockHolders(filepath.Join(t.TempDir(), "gone")); h != nil {
		t.Fatalf("missing file: holders %v", h)
	}
}
