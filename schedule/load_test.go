package schedule

import (
	"reflect"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/graph/graphtest"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// Load gives a reader what the scheduler's loader gives a request: the same graph (nodes,
// edges, features) and statistics, with edges stored at ingest and with none stored (built
// from the catalogue), and with tasks known only from rollouts.
func TestLoadIsTheSchedulersLoad(t *testing.T) {
	tasks := graphtest.Catalog(120, 3, 7)
	rollouts := []storage.Rollout{
		{Rollout: record.Rollout{Env: tasks[3].Env, Task: tasks[3].Task, Reward: 1, Group: "g", RolloutID: "1"}},
		{Rollout: record.Rollout{Env: tasks[3].Env, Task: tasks[3].Task, Reward: 0, Group: "g", RolloutID: "2"}},
		{Rollout: record.Rollout{Env: "elsewhere", Task: "only-in-rollouts", Reward: 1, RolloutID: "3"}},
	}
	for _, stored := range []bool{true, false} {
		db := storagetest.Open(t)
		b := &storage.Batch{Tasks: tasks, Rollouts: rollouts}
		if stored {
			b.Adjacency = NewEdgeKeeper(graph.Options{}).OnTasks
		}
		if _, err := db.Commit(b); err != nil {
			t.Fatal(err)
		}
		l := &loader{db: db, build: DefaultBuildGraph}
		st, err := l.load()
		if err != nil {
			t.Fatal(err)
		}
		var g *graph.Graph
		var stats []any
		err = db.View(func(r *storage.Reader) error {
			lg, lt, err := Load(r, DefaultBuildGraph)
			g = lg
			for _, s := range lt {
				stats = append(stats, s)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if g.NumEdges() == 0 {
			t.Fatalf("stored %v: a graph without edges proves little", stored)
		}
		if !reflect.DeepEqual(g, st.g) {
			t.Errorf("stored edges %v: Load's graph differs from the scheduler's", stored)
		}
		var want []any
		for _, s := range st.tasks {
			want = append(want, s)
		}
		if !reflect.DeepEqual(stats, want) || len(want) != len(tasks)+1 {
			t.Errorf("stored edges %v: Load's %d statistics differ from the scheduler's %d", stored, len(stats), len(want))
		}
	}
}

// Tasks known from rollouts alone (no catalogue row stored) have nothing to be linked by: the
// loader gives them a graph without edges and the same features as a build would (empty
// rows), without calling BuildGraph, which would read every task to link none; once one task
// is described, the graph is built.
func TestNoCatalogueNoBuild(t *testing.T) {
	db := storagetest.Open(t)
	var rs []storage.Rollout
	for i := range 50 {
		rs = append(rs, storage.Rollout{Rollout: record.Rollout{Env: "e", Task: string(rune('a'+i%26)) + string(rune('a'+i/26)), Reward: 1}})
	}
	if _, err := db.Commit(&storage.Batch{Rollouts: rs}); err != nil {
		t.Fatal(err)
	}
	builds := 0
	build := func(tasks []record.Task) *graph.Graph { builds++; return DefaultBuildGraph(tasks) }
	st, err := (&loader{db: db, build: build}).load()
	if err != nil {
		t.Fatal(err)
	}
	var want *graph.Graph
	err = db.View(func(r *storage.Reader) error {
		rows, err := storedRows(r, st.g.Len())
		want = DefaultBuildGraph(rows)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if builds != 0 || st.g.NumEdges() != 0 || want.NumEdges() != 0 || st.g.Len() != 50 {
		t.Fatalf("%d builds, %d nodes, %d edges (a build gives %d); want no build, 50 nodes, no edges", builds, st.g.Len(), st.g.NumEdges(), want.NumEdges())
	}
	if st.g.Feat == nil || st.g.Feat.Dim != 0 || st.g.Feat.NNZ() != 0 || st.g.Feat.Len() != 50 {
		t.Fatalf("features %+v; want 50 empty rows", st.g.Feat)
	}
	desc := []record.Task{{Env: "e", Task: "aa", Text: "refund the order"}, {Env: "e", Task: "ba", Text: "refund the order now"}}
	if _, err := db.Commit(&storage.Batch{Tasks: desc}); err != nil {
		t.Fatal(err)
	}
	if _, err := (&loader{db: db, build: build}).load(); err != nil || builds != 1 {
		t.Fatalf("with a described task: %d builds (%v); want 1", builds, err)
	}
}
