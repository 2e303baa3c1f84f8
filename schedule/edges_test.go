package schedule_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/ingest"
	"github.com/envsched/envsched/schedule"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// storedEdges returns the stored adjacency as node → neighbour → cross.
func storedEdges(t *testing.T, db *storage.DB) map[storage.TaskKey]map[storage.TaskKey]bool {
	t.Helper()
	out := map[storage.TaskKey]map[storage.TaskKey]bool{}
	err := db.View(func(r *storage.Reader) error {
		return r.Edges(func(ne storage.NodeEdges) error {
			m := map[storage.TaskKey]bool{}
			for _, e := range ne.Edges {
				m[storage.TaskKey{Env: e.Env, Task: e.Task}] = e.Cross
			}
			out[ne.Node] = m
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func ingestWithEdges(t *testing.T, db *storage.DB, dir string) {
	t.Helper()
	k, err := schedule.NewEdgeKeeper(db, graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in, err := ingest.New(db, dir, ingest.Options{OnTasks: k.OnTasks})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestEdgesStoredWithTheTasksThatMakeThem(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "catalog")
	if err := os.MkdirAll(cat, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(cat, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.jsonl", `{"env":"shop","task_id":"1","text":"cancel the pending order and refund the gift card","tools":["cancel_order"]}
{"env":"shop","task_id":"2","text":"cancel the pending order and refund the gift card please","tools":["cancel_order"]}
{"env":"shop","task_id":"3","text":"book a flight to paris in economy class","tools":["book_flight"]}
`)
	db := storagetest.Open(t)
	ingestWithEdges(t, db, dir)
	a1, a2 := storage.TaskKey{Env: "shop", Task: "1"}, storage.TaskKey{Env: "shop", Task: "2"}
	got := storedEdges(t, db)
	if _, ok := got[a1][a2]; !ok {
		t.Fatalf("near-duplicates shop/1 and shop/2 not linked in the stored edges: %v", got)
	}
	if _, ok := got[a2][a1]; !ok {
		t.Fatalf("stored edges not symmetric: %v", got)
	}

	// A later catalogue file: its task is linked to the earlier ones in the commit that adds it,
	// by a keeper that was rebuilt from the database (as after a restart).
	write("b.jsonl", `{"env":"store","task_id":"9","text":"cancel the pending order and refund the gift card now","tools":["cancel_order"]}
`)
	ingestWithEdges(t, db, dir)
	got = storedEdges(t, db)
	b9 := storage.TaskKey{Env: "store", Task: "9"}
	if cross, ok := got[b9][a1]; !ok || !cross {
		t.Fatalf("new task store/9 not linked across environments to shop/1: %v", got[b9])
	}
	if cross, ok := got[a1][b9]; !ok || !cross {
		t.Fatalf("shop/1's stored list not updated with store/9: %v", got[a1])
	}
}
