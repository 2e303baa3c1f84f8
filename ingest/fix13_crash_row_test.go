package ingest

import (
	"fmt"
	"testing"

	"github.com/envsched/envsched/storage"
)

// TestRewrittenCatalogueCrashRestoresTheRow: the sibling of
// TestRewrittenCatalogueCrashBeforeTheListsCommit for a task's row. b.jsonl, whose row t1 took,
// is rewritten without t1; its new generation is committed in an intermediate commit and the
// scan is killed before its last commit. The restarted scan (Counters.ListsPending) must give t1
// the row of a.jsonl, the only file listing it, as a scan not interrupted does.
func TestRewrittenCatalogueCrashRestoresTheRow(t *testing.T) {
	for _, kill := range []bool{false, true} {
		t.Run(fmt.Sprint("kill=", kill), func(t *testing.T) {
			var lc listsCrash
			e := newEnv(t, lc.options())
			e.write("catalog/a.jsonl", `{"env":"e","task_id":"t1","text":"alpha"}`+"\n")
			e.scan()
			e.write("catalog/b.jsonl", `{"env":"e","task_id":"t1","text":"beta"}`+"\n")
			e.scan()
			e.write("catalog/b.jsonl", `{"env":"e","task_id":"t9","text":"nine"}`+"\n") // in place, without t1
			writeTenRows(e)
			if kill {
				lc.scan(t, e)
				e.reopen()
			}
			e.scan()
			var text string
			if err := e.db.View(func(r *storage.Reader) error {
				ti, err := r.Task("e", "t1")
				text = ti.Text
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if text != "alpha" {
				t.Errorf("t1 %q after b.jsonl was rewritten without it; want alpha, a.jsonl's row", text)
			}
			if c := e.counters(); c.ListsPending {
				t.Error("lists_pending still set after a scan that stored the lists")
			}
		})
	}
}
