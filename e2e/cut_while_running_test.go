package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDatabaseCutShortWhileRunningStops: the database file truncated in place while `envsched
// run` serves it (`: > envsched.db`, or a smaller file copied over it with cp, which keeps the
// inode) left the daemon hung: its next commit faulted, bbolt's rollback faulted again and kept
// its lock, and the daemon, closing the database on its way out, waited for that lock for ever:
// no answer, no exit, no message, SIGTERM ignored. It now stops at its next heartbeat with exit
// code 1 and a message that names the file and says it was cut short.
func TestDatabaseCutShortWhileRunningStops(t *testing.T) {
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "rollouts"), 0o755))
	var b strings.Builder
	for i := range 2000 {
		b.WriteString(rolloutLine(fmt.Sprintf("r-%d", i), i))
	}
	must(t, os.WriteFile(filepath.Join(dir, "rollouts", "a.jsonl"), []byte(b.String()), 0o644))
	d := start(t, dir, opts{})
	d.waitReady()
	writeRequest(t, dir, "before", `{"size": 2}`)
	waitBatch(t, d, "before")
	db := filepath.Join(dir, "envsched.db")
	must(t, os.Truncate(db, 0))
	f, err := os.OpenFile(filepath.Join(dir, "rollouts", "a.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	for i := 2000; i < 2100; i++ {
		_, err := f.WriteString(rolloutLine(fmt.Sprintf("r-%d", i), i))
		must(t, err)
	}
	must(t, f.Close())
	writeRequest(t, dir, "after", `{"size": 2}`)
	code := d.wait()
	s := d.stderr.String()
	if code != 1 || !strings.Contains(s, db+" is damaged") || strings.Contains(s, "goroutine ") {
		t.Fatalf("exit %d; want 1 with a message that %s is damaged, no panic:\n%s", code, db, tail(s, 3000))
	}
}
