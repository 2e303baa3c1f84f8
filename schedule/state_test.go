package schedule

import (
	"slices"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/graph/graphtest"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// A task reworded in the catalogue gets new stored edges; a loader that read the graph before
// must read it again, though no task was added and none newly described.
func TestLoaderReadsTheGraphAgainWhenEdgesChange(t *testing.T) {
	db := storagetest.Open(t)
	tasks := graphtest.Catalog(200, 2, 5)
	k := NewEdgeKeeper(graph.Options{})
	if _, err := db.Commit(&storage.Batch{Tasks: tasks, Adjacency: k.OnTasks}); err != nil {
		t.Fatal(err)
	}
	l := &loader{db: db}
	before, err := l.load()
	if err != nil {
		t.Fatal(err)
	}
	x := tasks[0]
	x.Text, x.Tools, x.Tags = tasks[150].Text, tasks[150].Tools, tasks[150].Tags
	if _, err := db.Commit(&storage.Batch{Tasks: []record.Task{x}, Adjacency: k.OnTasks}); err != nil {
		t.Fatal(err)
	}
	after, err := l.load()
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := (&loader{db: db}).load()
	if err != nil {
		t.Fatal(err)
	}
	old, got, want := neighbours(t, before.g, x), neighbours(t, after.g, x), neighbours(t, fresh.g, x)
	if slices.Equal(old, want) {
		t.Fatalf("rewording %s/%s did not change its neighbours (%v): this test proves nothing", x.Env, x.Task, old)
	}
	if !slices.Equal(got, want) {
		t.Errorf("after the rewording the loader kept neighbours %v; the stored graph has %v", got, want)
	}
}

// neighbours returns the sorted names of the neighbours of task x in g.
func neighbours(t *testing.T, g *graph.Graph, x record.Task) []string {
	t.Helper()
	for i, nd := range g.Nodes {
		if g.Envs[nd.Env] == x.Env && nd.Task == x.Task {
			var out []string
			for _, e := range g.Neighbors(i) {
				to := g.Nodes[e.To]
				out = append(out, g.Envs[to.Env]+"/"+to.Task)
			}
			slices.Sort(out)
			return out
		}
	}
	t.Fatalf("task %s/%s not in the graph", x.Env, x.Task)
	return nil
}

// TestCorrectionsSayWhereFrom: Corrections says whether its numbers are a stored state's,
// none stored yet, or a stored state that does not decode (which shows as none, as the
// scheduler passes over it).
func TestCorrectionsSayWhereFrom(t *testing.T) {
	good, err := encodeState(&savedState{DriftOffsets: map[string]float64{"web": 0.25}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		state []byte
		want  string
	}{{nil, CorrectionsNone}, {good, CorrectionsStored}, {[]byte(`{"drift_offsets": {"web": 0.25}}`), CorrectionsStored},
		{[]byte("\x04\x05damaged"), CorrectionsUnreadable}, {[]byte("{not json"), CorrectionsUnreadable}} {
		got := Corrections(c.state)
		if got.State != c.want {
			t.Errorf("%q: state %q, want %q", c.state, got.State, c.want)
		}
		if off := got.Envs["web"].DriftOffset; (c.want == CorrectionsStored) != (off == 0.25) {
			t.Errorf("%q: web's drift offset %v", c.state, off)
		}
	}
}
