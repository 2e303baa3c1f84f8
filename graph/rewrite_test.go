package graph_test

import (
	"slices"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/graph/graphtest"
)

// TestMostTasksRedescribedBuildAgain: when an Add re-describes most tasks (a catalogue rewritten
// with new texts), the builder builds everything again rather than scoring each changed task
// against the index, which held every result at once and cost more than a fresh build (52,432
// tasks: 19-25 s and 1.5-1.7 GB against 13 s and 0.4 GB). The graph is then exactly that of a
// fresh builder given the new rows, and the reported keys are every node whose adjacency changed.
func TestMostTasksRedescribedBuildAgain(t *testing.T) {
	tasks := graphtest.Catalog(900, 4, 11)
	b := graph.NewBuilder(graph.Options{})
	b.Add(tasks)
	before := adjacencies(b, tasks)

	rewritten := slices.Clone(tasks)
	for i := range rewritten {
		if i%5 != 0 { // 80% of the tasks
			rewritten[i].Text += " revised edition " + rewritten[(i*7)%len(rewritten)].Text
		}
	}
	changed := b.Add(rewritten[1:]) // all but task 0 handed again, 720 of them re-described

	fresh := graph.NewBuilder(graph.Options{})
	fresh.Add(rewritten)
	if !sameDump(dump(fresh.Snapshot()), dump(b.Snapshot())) {
		t.Fatal("most tasks re-described: the graph differs from a fresh build of the new rows")
	}
	after := adjacencies(b, rewritten)
	reported := map[graph.NodeKey]bool{}
	for _, k := range changed {
		reported[k] = true
	}
	for _, tk := range rewritten {
		k := graph.NodeKey{Env: tk.Env, Task: tk.Task}
		if differs := !slices.Equal(before[k], after[k]); differs != reported[k] {
			t.Errorf("%v: adjacency changed=%v but reported=%v", k, differs, reported[k])
		}
	}
	checkInvariants(t, b.Snapshot(), b.Options())
}
