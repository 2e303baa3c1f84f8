package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCatalogueWithoutFinalNewlineListsItsLastRow: a catalogue written as Python's
// "\n".join(rows) (no newline after the last row) never listed its last task: the row waited,
// as an unfinished line, for a newline that never came, and nothing was said. A last row that is
// a whole JSON object reading as a task is now read at once; a newline and more rows written
// after it later are read as usual, each task once.
func TestCatalogueWithoutFinalNewlineListsItsLastRow(t *testing.T) {
	dir := t.TempDir()
	rows := make([]string, 5)
	for i := range rows {
		rows[i] = fmt.Sprintf(`{"env":"joined","task_id":"j-%d","text":"task %d"}`, i, i)
	}
	must(t, os.MkdirAll(filepath.Join(dir, "catalog"), 0o755))
	path := filepath.Join(dir, "catalog", "joined.jsonl")
	must(t, os.WriteFile(path, []byte(strings.Join(rows, "\n")), 0o644))
	d := start(t, dir, opts{})
	d.waitReady()
	ask := func(id string, n int) {
		t.Helper()
		writeRequest(t, dir, id, fmt.Sprintf(`{"size": %d, "envs": ["joined"]}`, n))
		waitUntil(t, "an answer to "+id, func() bool {
			if e, err := os.ReadFile(filepath.Join(dir, "batches", id+".error.json")); err == nil {
				t.Fatalf("%d tasks of a catalogue of %d rows without a final newline: %s", n, n, e)
			}
			_, err := os.Stat(filepath.Join(dir, "batches", id+".json"))
			return err == nil
		})
	}
	ask("five", 5)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString("\n" + `{"env":"joined","task_id":"j-5","text":"task 5"}` + "\n")
	must(t, err)
	must(t, f.Close())
	ask("six", 6)
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
	f2 := readDB(t, dir)
	if f2.counters.Quarantined != 0 {
		t.Errorf("%d lines quarantined; want none", f2.counters.Quarantined)
	}
}

// TestUnterminatedRolloutFileIsNamed: a rollout file written as "\n".join(lines) (no newline
// after its last line) lost its last rollout with nothing said. It still waits for its newline
// (PROTOCOL.md section 4), but once those bytes are a whole rollout unchanged for 10 s the log
// names the file (here at once: the file is older than that when the daemon starts).
func TestUnterminatedRolloutFileIsNamed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rollouts", "joined.jsonl")
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, []byte(strings.TrimSuffix(rolloutLine("j0", 0)+rolloutLine("j1", 1), "\n")), 0o644))
	old := time.Now().Add(-time.Minute)
	must(t, os.Chtimes(path, old, old))
	d := start(t, dir, opts{})
	d.waitReady()
	if got := barrier(t, d, "b1"); got != 1 {
		t.Errorf("rollouts_seen %d; want 1 (the line without its newline waits)", got)
	}
	barrier(t, d, "b2")
	if n := strings.Count(d.stderr.String(), "no newline after it"); n != 1 {
		t.Errorf("the file named %d times; want once\n%s", n, tail(d.stderr.String(), 2000))
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString("\n")
	must(t, err)
	must(t, f.Close())
	if got := barrier(t, d, "b3"); got != 2 {
		t.Errorf("after the newline: rollouts_seen %d; want 2", got)
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}
