package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDatabaseOverwrittenWhileRunningStops (hostile15): another database copied over
// DIR/envsched.db in place while `envsched run` served it (`dd conv=notrunc`, or `cp`, which
// keeps the inode), as long as the daemon's file or longer, was read as the daemon's own: it
// answered the next request with rollouts_seen 32,100 (the other database's 32,000 and the 100
// lines written since, for 30,100 written into DIR), its stored answers gone, and committed into
// the copy with its own free list, which left the copy damaged ("decode edges: stored value is
// corrupt"). It now stops with exit code 1 saying the file was overwritten, answers nothing
// from it, and leaves the copy as it was written.
func TestDatabaseOverwrittenWhileRunningStops(t *testing.T) {
	other := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(other, "rollouts"), 0o755))
	var b strings.Builder
	for i := range 32000 {
		fmt.Fprintf(&b, `{"env":"other-%d","task_id":"o-%d","reward":%d,"step":%d,"rollout_id":"o%d"}`+"\n",
			i%5, i%200, i%2, i/1000, i)
	}
	must(t, os.WriteFile(filepath.Join(other, "rollouts", "o.jsonl"), []byte(b.String()), 0o644))
	if out, err := execCommand([]string{"ingest", "--dir", other}).CombinedOutput(); err != nil {
		t.Fatalf("ingest of the other folder: %v\n%s", err, out)
	}
	otherDB, err := os.ReadFile(filepath.Join(other, "envsched.db"))
	must(t, err)

	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "rollouts"), 0o755))
	b.Reset()
	for i := range 30000 {
		b.WriteString(rolloutLine(fmt.Sprintf("r-%d", i), i))
	}
	must(t, os.WriteFile(filepath.Join(dir, "rollouts", "a.jsonl"), []byte(b.String()), 0o644))
	d := start(t, dir, opts{})
	d.waitReady()
	writeRequest(t, dir, "before", `{"size": 2}`)
	if n := rolloutsSeen(t, waitBatch(t, d, "before")); n != 30000 {
		t.Fatalf("rollouts_seen %d before the overwrite, want 30000", n)
	}
	db := filepath.Join(dir, "envsched.db")
	fi, err := os.Stat(db)
	must(t, err)
	if n := fi.Size() - int64(len(otherDB)); n > 0 {
		// the case is a file as long or longer: bbolt grows a file past its last page, and the
		// other database's pages packed full fit a file of half the daemon's (scale15), so it is
		// grown as bbolt would, with zeros past its pages
		otherDB = append(otherDB, make([]byte, n)...)
	}
	f, err := os.OpenFile(db, os.O_WRONLY, 0) // in place, as dd conv=notrunc
	must(t, err)
	_, err = f.WriteAt(otherDB, 0)
	must(t, err)
	must(t, f.Close())

	ro, err := os.OpenFile(filepath.Join(dir, "rollouts", "a.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	for i := 30000; i < 30100; i++ {
		_, err := ro.WriteString(rolloutLine(fmt.Sprintf("r-%d", i), i))
		must(t, err)
	}
	must(t, ro.Close())
	writeRequest(t, dir, "after", `{"size": 2}`)
	deadline := time.Now().Add(30 * time.Second)
	for !d.exited() {
		if data, err := os.ReadFile(filepath.Join(dir, "batches", "after.json")); err == nil {
			t.Fatalf("answered from the database copied over its own: rollouts_seen %d (30100 written)\n%s",
				rolloutsSeen(t, data), tail(d.stderr.String(), 2000))
		}
		if time.Now().After(deadline) {
			t.Fatalf("still running 30 s after its database was overwritten\n%s", tail(d.stderr.String(), 2000))
		}
		time.Sleep(10 * time.Millisecond)
	}
	code := d.wait()
	s := d.stderr.String()
	if code != 1 || !strings.Contains(s, db+" was overwritten in place while envsched had it open") || strings.Contains(s, "goroutine ") {
		t.Fatalf("exit %d; want 1 saying %s was overwritten in place, no panic:\n%s", code, db, tail(s, 3000))
	}
	if now, _ := os.ReadFile(db); !bytes.Equal(now, otherDB) {
		t.Errorf("the database copied over the daemon's was written into by it")
	}
}
