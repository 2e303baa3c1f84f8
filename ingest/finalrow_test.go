package ingest

import (
	"bytes"
	"log/slog"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

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

// TestUnterminatedRolloutIsLogged (hostile16): a rollout file whose last line is a whole rollout
// without its newline (lines joined by "\n", none after the last) lost that rollout with nothing
// said: it waits for its newline, as the protocol says. The log now names such a file once, when
// those bytes have not changed for 10 s; a line still being written (not a whole rollout) or
// written just now is not named, and the line counts once its newline comes.
func TestUnterminatedRolloutIsLogged(t *testing.T) {
	var log bytes.Buffer
	e := newEnv(t, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	old := time.Now().Add(-time.Minute)
	e.write("rollouts/joined.jsonl", `{"env":"e","task_id":"1","reward":1}`+"\n"+`{"env":"e","task_id":"2","reward":0}`)
	e.write("rollouts/writing.jsonl", `{"env":"e","task_id":"3","reward":1}`+"\n"+`{"env":"e","task_`)
	e.write("rollouts/fresh.jsonl", `{"env":"e","task_id":"4","reward":1}`)
	for _, name := range []string{"rollouts/joined.jsonl", "rollouts/writing.jsonl"} {
		if err := os.Chtimes(e.path(name), old, old); err != nil {
			t.Fatal(err)
		}
	}
	e.scan()
	e.scan()
	const msg = "rollout file ends in a whole rollout with no newline after it"
	if n := strings.Count(log.String(), msg); n != 1 || !strings.Contains(log.String(), "path=rollouts/joined.jsonl") {
		t.Errorf("logged %d times; want once, for rollouts/joined.jsonl:\n%s", n, log.String())
	}
	if n := e.counters().Rollouts; n != 2 {
		t.Errorf("%d rollouts counted; want 2 (the lines that end in a newline)", n)
	}
	e.append("rollouts/joined.jsonl", "\n")
	e.scan()
	if n := e.counters().Rollouts; n != 3 {
		t.Errorf("after the newline: %d rollouts counted; want 3", n)
	}
}
