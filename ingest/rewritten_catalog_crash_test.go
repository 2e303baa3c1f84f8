package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/envsched/envsched/storage"
)

// TestRewrittenCatalogueCrashBeforeTheListsCommit (review13): a scan that finds a catalogue
// file rewritten (b.jsonl: t5 gone, t9 new) commits the file's new generation in an
// intermediate commit when more rows follow it than a commit holds, and the tasks listed now
// (Batch.Listed, which retires t5) only in its last commit. Killed before that last commit, the
// restarted scan finds b.jsonl read to its end, nothing rewritten: catalogChanged stays false
// and t5, listed by no file, is never retired (until some other catalogue file changes), where
// a process that was not killed retired it.
func TestRewrittenCatalogueCrashBeforeTheListsCommit(t *testing.T) {
	var lc listsCrash
	e := newEnv(t, lc.options())
	e.write("catalog/a.jsonl", `{"env":"e","task_id":"t1","text":"one"}`+"\n")
	e.write("catalog/b.jsonl", `{"env":"e","task_id":"t5","text":"five"}`+"\n")
	e.scan()
	e.write("catalog/b.jsonl", `{"env":"e","task_id":"t9","text":"nine"}`+"\n") // in place, without t5
	writeTenRows(e)
	lc.scan(t, e)
	e.reopen()
	e.scan()
	if !e.retired()[storage.TaskKey{Env: "e", Task: "t5"}] {
		t.Errorf("t5, listed by no catalogue file since b.jsonl was rewritten, is not retired after a crash " +
			"before the scan's last commit (a scan not interrupted retires it)")
	}
}

// listsCrash simulates a crash at the commit of a scan's last commit, the one carrying the tasks
// listed now (Batch.Listed): a scan of more rows than a commit holds (MaxRecords 2) writes the
// files' new generations in the commits before it.
type listsCrash struct{ armed bool }

// options are the ingest options whose commit hook fails the lists' commit once armed.
func (c *listsCrash) options() Options {
	return Options{MaxRecords: 2, commitHook: func(b *storage.Batch) error {
		if c.armed && b.Listed != nil {
			c.armed = false
			return errCrash
		}
		return nil
	}}
}

// scan runs a scan that must fail at the lists' commit.
func (c *listsCrash) scan(t *testing.T, e *env) {
	t.Helper()
	c.armed = true
	if _, err := e.in.Scan(context.Background()); !errors.Is(err, errCrash) {
		t.Fatalf("scan: %v; want the simulated crash at the commit of the lists", err)
	}
	if c.armed {
		t.Fatal("the lists' commit was not reached: nothing tested")
	}
}

// writeTenRows writes catalog/z.jsonl, ten rows: more than a commit of MaxRecords 2 holds.
func writeTenRows(e *env) {
	var z strings.Builder
	for i := range 10 {
		fmt.Fprintf(&z, `{"env":"e","task_id":"z%d","text":"zed %d"}`+"\n", i, i)
	}
	e.write("catalog/z.jsonl", z.String())
}
