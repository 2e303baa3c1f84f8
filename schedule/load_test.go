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
