package ingest

import (
	"sort"
	"strings"
	"testing"

	"github.com/envsched/envsched/storage"
)

// TestCatalogueLastRowWithoutNewline (hostile16): a catalogue file whose last row has no newline
// (written as "\n".join(rows)) never listed that row's task. A whole row there is read at once;
// bytes that are not yet a whole row (a row being written) still wait, and a rollout line still
// counts only once it ends in a newline (PROTOCOL.md section 4).
func TestCatalogueLastRowWithoutNewline(t *testing.T) {
	e := newEnv(t, Options{})
	e.write("catalog/c.jsonl", `{"env":"e","task_id":"1","text":"one"}`+"\n"+`{"env":"e","task_id":"2","text":"two"}`)
	e.write("rollouts/r.jsonl", `{"env":"e","task_id":"1","reward":1}`)
	e.scan()
	if got := e.catalogued(); strings.Join(got, ",") != "e/1,e/2" {
		t.Errorf("catalogued %v; want e/1 and e/2", got)
	}
	if n := e.counters().Rollouts; n != 0 {
		t.Errorf("%d rollouts counted from a line without its newline; want 0", n)
	}
	e.append("catalog/c.jsonl", "\n"+`{"env":"e","task_id":"3","text":"thr`)
	e.scan()
	if got := e.catalogued(); strings.Join(got, ",") != "e/1,e/2" {
		t.Errorf("with a row being written: catalogued %v; want e/1 and e/2", got)
	}
	e.append("catalog/c.jsonl", `ee"}`+"\n")
	e.append("rollouts/r.jsonl", "\n")
	e.scan()
	e.reopen()
	e.scan()
	if got := e.catalogued(); strings.Join(got, ",") != "e/1,e/2,e/3" {
		t.Errorf("catalogued %v; want e/1, e/2 and e/3", got)
	}
	if c := e.counters(); c.Rollouts != 1 || c.Quarantined != 0 {
		t.Errorf("rollouts %d, quarantined %d; want 1 and 0", c.Rollouts, c.Quarantined)
	}
}

// catalogued returns the tasks a catalogue row was read for, as "env/task", sorted.
func (e *env) catalogued() []string {
	e.t.Helper()
	var out []string
	err := e.db.View(func(r *storage.Reader) error {
		return r.Tasks(false, func(ti storage.TaskInfo) error {
			if ti.InCatalog {
				out = append(out, ti.Env+"/"+ti.Task.Task)
			}
			return nil
		})
	})
	if err != nil {
		e.t.Fatal(err)
	}
	sort.Strings(out)
	return out
}
