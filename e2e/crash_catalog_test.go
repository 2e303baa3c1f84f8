package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/envsched/envsched/graph/graphtest"
	"github.com/envsched/envsched/storage"
)

// TestCatalogIngestKilledResumesToTheSameEdges: `envsched ingest` of a catalogue killed with
// SIGKILL at growing delays (in its task commits, its graph build or its edge commits), then run
// until it finishes, leaves the adjacency lists of an ingest never killed, to the bit, and no
// pending mark.
func TestCatalogIngestKilledResumesToTheSameEdges(t *testing.T) {
	var buf []byte
	for _, task := range graphtest.Catalog(10000, 10, 3) {
		row, err := json.Marshal(map[string]any{"env": task.Env, "task_id": task.Task, "text": task.Text, "tools": task.Tools})
		must(t, err)
		buf = append(append(buf, row...), '\n')
	}
	dirs := [2]string{t.TempDir(), t.TempDir()}
	for _, d := range dirs {
		must(t, os.MkdirAll(filepath.Join(d, "catalog"), 0o755))
		must(t, os.WriteFile(filepath.Join(d, "catalog", "c.jsonl"), buf, 0o644))
	}
	if out, err := execCommand([]string{"ingest", "--dir", dirs[0]}).CombinedOutput(); err != nil {
		t.Fatalf("ingest: %v\n%s", err, out)
	}
	kills := 0
	for delay := 150 * time.Millisecond; ; delay = delay * 17 / 10 {
		cmd := execCommand([]string{"ingest", "--dir", dirs[1]})
		must(t, cmd.Start())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("ingest after %d kills: %v", kills, err)
			}
		case <-time.After(delay):
			must(t, cmd.Process.Signal(syscall.SIGKILL))
			<-done
			kills++
			continue
		}
		break
	}
	want, _ := edgesOf(t, filepath.Join(dirs[0], "envsched.db"))
	got, pending := edgesOf(t, filepath.Join(dirs[1], "envsched.db"))
	if pending || len(want) < 5000 || !reflect.DeepEqual(got, want) {
		t.Fatalf("after %d kills: %d lists (pending %v), want the %d of the ingest never killed", kills, len(got),
			pending, len(want))
	}
	if kills == 0 {
		t.Fatal("the ingest finished before the first kill: nothing was tested")
	}
	t.Logf("%d kills, %d lists", kills, len(got))
}

// edgesOf returns every stored adjacency list of the database at path and its pending mark.
func edgesOf(t *testing.T, path string) (map[storage.TaskKey][]storage.Edge, bool) {
	t.Helper()
	db, err := storage.Open(path, storage.Options{ReadOnly: true})
	must(t, err)
	defer db.Close()
	out := map[storage.TaskKey][]storage.Edge{}
	pending := false
	must(t, db.View(func(r *storage.Reader) error {
		c, err := r.Counters()
		pending = c.EdgesPending
		if err != nil {
			return err
		}
		return r.Edges(func(ne storage.NodeEdges) error { out[ne.Node] = ne.Edges; return nil })
	}))
	return out, pending
}
