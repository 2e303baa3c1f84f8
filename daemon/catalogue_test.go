package daemon

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envsched/envsched/storage"
)

// TestLatestCatalogueIsTheTruth: tasks removed from the catalogue, or moved to another
// environment by a new catalogue, were still chosen under their old environment. Now a task the
// catalogue files no longer list is never chosen again, its history is kept, and it comes back
// when a catalogue lists it again. Checked for a rewritten file and for a deleted one.
func TestLatestCatalogueIsTheTruth(t *testing.T) {
	dir := t.TempDir()
	cat := func(name string, rows ...string) {
		t.Helper()
		var b strings.Builder
		for _, r := range rows {
			env, task, _ := strings.Cut(r, "/")
			fmt.Fprintf(&b, `{"env":%q,"task_id":%q,"text":"task %s of %s"}`+"\n", env, task, task, env)
		}
		tmp := filepath.Join(dir, "catalog", "."+name+".tmp")
		must(t, os.MkdirAll(filepath.Dir(tmp), 0o755))
		must(t, os.WriteFile(tmp, []byte(b.String()), 0o644))
		must(t, os.Rename(tmp, filepath.Join(dir, "catalog", name)))
	}
	cat("tasks.jsonl", "a/1", "a/2", "a/3", "b/1", "b/2")
	cat("extra.jsonl", "x/1")
	appendFile(t, filepath.Join(dir, "rollouts", "r.jsonl"),
		`{"env":"a","task_id":"1","reward":1}`+"\n"+`{"env":"a","task_id":"1","reward":0}`+"\n")
	r := serveTest(t, testConfig(dir, true))
	ask := func(id string, size int) (map[string]bool, map[string]string) {
		t.Helper()
		writeRequest(t, dir, id+".json", fmt.Sprintf(`{"size": %d}`, size))
		for {
			if data, err := os.ReadFile(filepath.Join(dir, "batches", id+".json")); err == nil {
				var ans struct {
					Tasks []struct {
						Env  string `json:"env"`
						Task string `json:"task_id"`
					} `json:"tasks"`
				}
				must(t, json.Unmarshal(data, &ans))
				got := map[string]bool{}
				for _, k := range ans.Tasks {
					got[k.Env+"/"+k.Task] = true
				}
				return got, nil
			}
			if _, err := os.Stat(filepath.Join(dir, "batches", errorFileName(id))); err == nil {
				return nil, r.errorOf(id)
			}
		}
	}
	if got, e := ask("all", 6); e != nil || len(got) != 6 {
		t.Fatalf("first batch %v, %v; want all 6 tasks", got, e)
	}
	// a/1 removed (it has history), a/2 moved to environment c, extra.jsonl deleted.
	cat("tasks.jsonl", "a/3", "c/2", "b/1", "b/2")
	must(t, os.Remove(filepath.Join(dir, "catalog", "extra.jsonl")))
	got, e := ask("after", 4)
	if e != nil {
		t.Fatalf("after the change: %v", e)
	}
	for _, k := range []string{"a/3", "c/2", "b/1", "b/2"} {
		if !got[k] {
			t.Errorf("batch after the change %v lacks %s", got, k)
		}
	}
	if _, e := ask("toomany", 5); e == nil || !strings.Contains(e["error"], "eligible") {
		t.Errorf("a batch of 5 after the change: error %v; want too few eligible tasks (a/1, a/2, x/1 retired)", e)
	}
	r.stop()
	db, err := storage.Open(filepath.Join(dir, "envsched.db"), storage.Options{ReadOnly: true})
	must(t, err)
	defer db.Close()
	var rollouts int64
	must(t, db.View(func(rd *storage.Reader) error {
		return rd.Tasks(false, func(ti storage.TaskInfo) error {
			if ti.Env == "a" && ti.Task.Task == "1" {
				rollouts = ti.Stats.Rollouts
			}
			return nil
		})
	}))
	if rollouts != 2 {
		t.Errorf("retired task a/1 has %d rollouts stored; want its history kept (2)", rollouts)
	}
}
