package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStoredAnswerOfRetiredTasksIsLogged (newuser14): a new run in an old exchange directory
// (its folders emptied, envsched.db kept) starts its request IDs again at 000001, and each gets
// the earlier run's stored answer, with tasks the new catalogue does not list, without a word
// when the body is the same. The protocol's guarantee stands (the same ID, the same bytes), and
// the log now says what happened and what to do.
func TestStoredAnswerOfRetiredTasksIsLogged(t *testing.T) {
	dir := t.TempDir()
	catalogue := func(env string) {
		var b strings.Builder
		for i := range 6 {
			b.WriteString(`{"env":"` + env + `","task_id":"t` + string(rune('0'+i)) + `"}` + "\n")
		}
		must(t, os.MkdirAll(filepath.Join(dir, "catalog"), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "catalog", "tasks.jsonl"), []byte(b.String()), 0o644))
	}
	catalogue("old-run")
	d := start(t, dir, opts{})
	d.waitReady()
	writeRequest(t, dir, "run-000001", `{"size": 2}`)
	first := waitBatch(t, d, "run-000001")
	writeRequest(t, dir, "run-000002", `{"size": 2}`) // answered again below: its tasks are still listed
	waitBatch(t, d, "run-000002")
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Fatalf("SIGTERM: exit %d", code)
	}

	for _, sub := range []string{"requests", "batches", "rollouts"} { // "a fresh run": the database stays
		must(t, os.RemoveAll(filepath.Join(dir, sub)))
	}
	catalogue("new-run")
	d = start(t, dir, opts{})
	d.waitReady()
	writeRequest(t, dir, "run-000001", `{"size": 2}`)
	if b := waitBatch(t, d, "run-000001"); !bytes.Equal(b, first) {
		t.Fatalf("a used ID got another answer:\n%s\n%s", first, b)
	}
	waitUntil(t, "the warning about the retired tasks", func() bool {
		return strings.Contains(d.stderr.String(), "whose tasks no catalogue file lists now")
	})
	log := d.stderr.String()
	for _, want := range []string{`"id":"run-000001"`, `"retired_tasks":2`, "delete the database"} {
		if !strings.Contains(log, want) {
			t.Errorf("the warning does not say %s:\n%s", want, tail(log, 3000))
		}
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}

	// An ID answered again while its tasks are still listed (a resumed run) says nothing.
	catalogue("old-run")
	d = start(t, dir, opts{})
	d.waitReady()
	writeRequest(t, dir, "run-000002", `{"size": 2}`)
	waitBatch(t, d, "run-000002")
	time.Sleep(200 * time.Millisecond) // its log line, were there one
	if strings.Contains(d.stderr.String(), "no catalogue file lists now") {
		t.Errorf("a replay of listed tasks was warned about:\n%s", tail(d.stderr.String(), 2000))
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}
