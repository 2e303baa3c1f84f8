package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"

	"github.com/envsched/envsched/graph/graphtest"
)

// TestDaemonRewrittenCatalogueStoresAFreshBuildsEdges (review13): a running daemon whose
// catalogue is rewritten with new texts for most tasks builds its graph again (graph.Builder.Flush,
// more than half the nodes dirty); its long-lived EdgeKeeper must store every list that changed,
// so that the stored edges are those of an ingest of the new catalogue alone.
func TestDaemonRewrittenCatalogueStoresAFreshBuildsEdges(t *testing.T) {
	tasks := graphtest.Catalog(3000, 6, 7)
	encode := func(rewrite bool) []byte {
		var buf []byte
		for i, task := range tasks {
			text := task.Text
			if rewrite && i%5 != 0 {
				text += " revised edition " + tasks[(i*7)%len(tasks)].Text
			}
			row, err := json.Marshal(map[string]any{"env": task.Env, "task_id": task.Task, "text": text, "tools": task.Tools})
			must(t, err)
			buf = append(append(buf, row...), '\n')
		}
		return buf
	}
	running, fresh := t.TempDir(), t.TempDir()
	for _, d := range []string{running, fresh} {
		must(t, os.MkdirAll(filepath.Join(d, "catalog"), 0o755))
	}
	must(t, os.WriteFile(filepath.Join(running, "catalog", "tasks.jsonl"), encode(false), 0o644))
	must(t, os.WriteFile(filepath.Join(fresh, "catalog", "tasks.jsonl"), encode(true), 0o644))

	d := start(t, running, opts{})
	d.waitReady()
	writeRequest(t, running, "r1", `{"size": 4}`)
	waitBatch(t, d, "r1")
	tmp := filepath.Join(running, "catalog", ".tasks.jsonl.tmp")
	must(t, os.WriteFile(tmp, encode(true), 0o644))
	must(t, os.Rename(tmp, filepath.Join(running, "catalog", "tasks.jsonl")))
	writeRequest(t, running, "r2", `{"size": 4}`) // its barrier ingests the rewrite
	waitBatch(t, d, "r2")
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if out, err := execCommand([]string{"ingest", "--dir", fresh}).CombinedOutput(); err != nil {
		t.Fatalf("ingest: %v\n%s", err, out)
	}
	want, _ := edgesOf(t, filepath.Join(fresh, "envsched.db"))
	got, pending := edgesOf(t, filepath.Join(running, "envsched.db"))
	if pending || !reflect.DeepEqual(got, want) {
		diff := 0
		for k, v := range want {
			if !reflect.DeepEqual(got[k], v) {
				diff++
			}
		}
		t.Fatalf("%d of %d stored lists differ from a fresh ingest of the rewritten catalogue (pending %v)", diff, len(want), pending)
	}
}
