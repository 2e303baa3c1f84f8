package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLockedDatabaseNamesItsHolder: `envsched ingest` on a database whose lock another process
// holds said "held by another envsched process", whoever it was. Here flock(1), no envsched,
// holds it: the command exits 3 saying the file is locked by another process, and which.
func TestLockedDatabaseNamesItsHolder(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock(1) here")
	}
	dir := t.TempDir()
	ensureCatalog(t, dir)
	db := filepath.Join(dir, "envsched.db")
	if out, err := exec.Command(binary, "ingest", "--dir", dir).CombinedOutput(); err != nil {
		t.Fatalf("ingest: %v\n%s", err, out)
	}
	holder := exec.Command("flock", "--exclusive", db, "sleep", "60")
	must(t, holder.Start())
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	var stderr bytes.Buffer
	code := 0
	waitUntil(t, "ingest refused", func() bool { // until flock(1) has taken the lock
		stderr.Reset()
		cmd := exec.Command(binary, "ingest", "--dir", dir)
		cmd.Stderr = &stderr
		var exit *exec.ExitError
		if err := cmd.Run(); errors.As(err, &exit) {
			code = exit.ExitCode()
			return true
		}
		time.Sleep(10 * time.Millisecond)
		return false
	})
	msg := stderr.String()
	if code != 3 || strings.Contains(msg, "envsched process") {
		t.Errorf("exit %d, %q; want exit 3, and no envsched process named", code, msg)
	}
	if _, err := os.Stat("/proc/locks"); err == nil {
		if want := fmt.Sprintf("database file %s is locked by another process (pid %d, flock)", db, holder.Process.Pid); !strings.Contains(msg, want) {
			t.Errorf("stderr %q; want it to say %q", msg, want)
		}
	}
}
