package storage_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// EdgeViews reads what Edges reads (copied out of the call, they are equal, lists and order),
// and EdgeTotal counts their edges, over lists of several lengths, an empty environment name
// part and a list that was replaced.
func TestEdgeViewsReadWhatEdgesRead(t *testing.T) {
	db := storagetest.Open(t)
	var lists []storage.NodeEdges
	for i := range 40 {
		ne := storage.NodeEdges{Node: storage.TaskKey{Env: fmt.Sprintf("env-%d", i%3), Task: fmt.Sprintf("t%d", i)}}
		for j := range i % 7 {
			ne.Edges = append(ne.Edges, storage.Edge{Env: fmt.Sprintf("env-%d", j%2), Task: fmt.Sprintf("n%d-%d", i, j),
				Weight: float32(j) / 7, Sim: float32(i) / 40, Cross: j%2 == 1})
		}
		lists = append(lists, ne)
	}
	commit(t, db, &storage.Batch{Edges: lists})
	commit(t, db, &storage.Batch{Edges: []storage.NodeEdges{{Node: storage.TaskKey{Env: "env-1", Task: "t1"},
		Edges: []storage.Edge{{Env: "x", Task: "", Weight: 1, Sim: 1}}}}})
	err := db.View(func(r *storage.Reader) error {
		var want, got []storage.NodeEdges
		wantTotal := 0
		if err := r.Edges(func(ne storage.NodeEdges) error {
			want = append(want, ne)
			wantTotal += len(ne.Edges)
			return nil
		}); err != nil {
			return err
		}
		if err := r.EdgeViews(func(node storage.TaskKey, edges []storage.Edge) error {
			ne := storage.NodeEdges{Node: storage.TaskKey{Env: clone(node.Env), Task: clone(node.Task)}}
			for _, e := range edges {
				e.Env, e.Task = clone(e.Env), clone(e.Task)
				ne.Edges = append(ne.Edges, e)
			}
			got = append(got, ne)
			return nil
		}); err != nil {
			return err
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("EdgeViews read\n%v\nEdges read\n%v", got, want)
		}
		if len(want) < 30 {
			t.Errorf("only %d lists stored", len(want))
		}
		total, err := r.EdgeTotal()
		if err != nil || total != wantTotal {
			t.Errorf("EdgeTotal = %d, %v; want %d", total, err, wantTotal)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	storagetest.MustCheck(t, db, "")
}

func clone(s string) string { return string([]byte(s)) }
