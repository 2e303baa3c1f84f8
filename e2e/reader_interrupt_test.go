package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/envsched/envsched/storage"
)

// TestInterruptedReaderLeavesNothing: stats, report and export interrupted (SIGINT) while they
// wait for the daemon's copy of the database remove their request and exit 1; before, they died
// at once and left the request (and, answered later, a whole copy) in DIR/snapshots.
func TestInterruptedReaderLeavesNothing(t *testing.T) {
	for _, args := range [][]string{{"stats"}, {"report", "--out", "r.html"}, {"export", "--what", "tasks"}} {
		t.Run(args[0], func(t *testing.T) {
			dir := t.TempDir()
			db, err := storage.Open(filepath.Join(dir, "envsched.db"), storage.Options{})
			must(t, err)
			defer db.Close() // held: the reader must ask for a copy, and nobody answers
			folder := filepath.Join(dir, "snapshots")
			must(t, os.Mkdir(folder, 0o755))
			cmd := execCommand(append(append([]string{}, args...), "--dir", dir))
			cmd.Dir = dir
			var out lockedBuffer
			cmd.Stdout, cmd.Stderr = &out, &out
			must(t, cmd.Start())
			waitUntil(t, "the reader's snapshot request", func() bool { return len(wants(t, folder)) > 0 })
			must(t, cmd.Process.Signal(syscall.SIGINT))
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("the reader did not stop on SIGINT:\n%s", out.String())
			}
			if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(out.String(), "interrupted") {
				t.Errorf("exit %d; want 1 with a message saying it was interrupted:\n%s", code, out.String())
			}
			entries, err := os.ReadDir(folder)
			must(t, err)
			if len(entries) > 0 {
				t.Errorf("left in %s: %v", folder, entries)
			}
		})
	}
}

// wants lists the snapshot requests in folder.
func wants(t *testing.T, folder string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(folder, "*.want"))
	must(t, err)
	return m
}
