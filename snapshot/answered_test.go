package snapshot

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAnsweredRefusesFIFO: a FIFO under a reader's error-file name (DIR/snapshots is writable
// by whoever writes DIR) must not block the reader waiting for its snapshot: it is read as a
// failure, not waited on.
func TestAnsweredRefusesFIFO(t *testing.T) {
	folder := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(folder, "r-1"+errorSuffix), 0o644); err != nil {
		t.Fatal(err)
	}
	type result struct {
		done bool
		err  error
	}
	ch := make(chan result, 1)
	go func() { _, done, err := answered(folder, "r-1"); ch <- result{done, err} }()
	select {
	case r := <-ch:
		if !r.done || r.err == nil || !strings.Contains(r.err.Error(), "not a regular file") {
			t.Errorf("answered: done %v, err %v; want a failure naming the FIFO", r.done, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("answered blocked on a FIFO")
	}
}
