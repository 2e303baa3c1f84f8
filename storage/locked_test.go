package storage_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/envsched/envsched/storage"
)

// TestLockedSaysWhoHoldsIt: a database whose lock another process holds was "held by another
// envsched process" whoever held it. Now the message says the file is locked by another process,
// and which (pid and command) where /proc/locks tells it: here a flock(1) that is no envsched.
func TestLockedSaysWhoHoldsIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "envsched.db")
	db := openAt(t, path, storage.Options{})
	db.Close()
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock(1) here")
	}
	holder := exec.Command("flock", "--exclusive", path, "sleep", "60")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		var other *storage.DB
		if other, err = storage.Open(path, storage.Options{Timeout: 100 * time.Millisecond}); err == nil {
			other.Close() // flock(1) has not taken the lock yet
			continue
		}
		break
	}
	if !errors.Is(err, storage.ErrLocked) {
		t.Fatalf("open while flock(1) holds the file: %v; want ErrLocked", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "envsched process") {
		t.Errorf("%q says an envsched process holds it; flock(1) does", msg)
	}
	if _, serr := os.Stat("/proc/locks"); serr != nil {
		t.Skipf("no /proc/locks: %q", msg)
	}
	if want := fmt.Sprintf("database file %s is locked by another process (pid %d, flock)", path, holder.Process.Pid); msg != want {
		t.Errorf("error %q; want %q", msg, want)
	}
}
