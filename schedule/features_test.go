package schedule

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// featureCatalog is a small catalogue of two environments, in no particular order, whose
// tasks share some words, tools and tags; one task has no text at all.
func featureCatalog() []record.Task {
	return []record.Task{
		{Env: "travel", Task: "t3", Text: "Refund the hotel booking", Tools: []string{"bookings", "payments"}, Tags: []string{"refund"}},
		{Env: "travel", Task: "t1", Text: "look up a flight to Oslo", Tools: []string{"flights"}},
		{Env: "shop", Task: "s2", Text: "refund order 1234 for the customer", Tools: []string{"orders", "payments"}},
		{Env: "travel", Task: "t2", Text: "change the flight booking", Tools: []string{"flights", "bookings"}, Tags: []string{"change"}},
		{Env: "shop", Task: "s1", Text: "look up the order status", Tools: []string{"orders"}},
		{Env: "shop", Task: "s3", Tags: []string{"empty"}},
	}
}

// sortedTasks returns tasks in storage order: environment, then task, byte order.
func sortedTasks(tasks []record.Task) []record.Task {
	out := slices.Clone(tasks)
	slices.SortFunc(out, func(a, b record.Task) int {
		return cmp.Or(cmp.Compare(a.Env, b.Env), cmp.Compare(a.Task, b.Task))
	})
	return out
}

func nodeName(g *graph.Graph, i int) string { return g.Envs[g.Nodes[i].Env] + "/" + g.Nodes[i].Task }

// checkFeatures checks that g carries one feature row per node, equal to want's rows in order.
func checkFeatures(t *testing.T, what string, g *graph.Graph, want *graph.Features) {
	t.Helper()
	if g.Feat == nil {
		t.Fatalf("%s: the loaded graph carries no features", what)
	}
	if g.Feat.Len() != g.Len() || g.Feat.Len() != want.Len() {
		t.Fatalf("%s: %d feature rows for %d nodes, want %d", what, g.Feat.Len(), g.Len(), want.Len())
	}
	if g.Feat.Dim != want.Dim {
		t.Errorf("%s: Dim %d, want %d", what, g.Feat.Dim, want.Dim)
	}
	for i := range g.Len() {
		if !slices.Equal(g.Feat.Row(i), want.Row(i)) {
			t.Errorf("%s: node %s has features %v, want %v", what, nodeName(g, i), g.Feat.Row(i), want.Row(i))
		}
	}
}

// TestLoaderAttachesCatalogueFeatures: the loaded graph carries graph.TextFeatures of the
// stored catalogue rows in node order; a graph grown by tasks first seen in rollouts gives
// them empty rows and keeps every other row as it was; a catalogue row read afterwards
// makes the graph read again, with that row's features.
func TestLoaderAttachesCatalogueFeatures(t *testing.T) {
	db := storagetest.Open(t)
	cat := featureCatalog()
	b := storage.Batch{Tasks: cat}
	for _, task := range cat[:3] {
		for k := range 4 {
			b.Rollouts = append(b.Rollouts, storage.Rollout{Rollout: record.Rollout{Env: task.Env, Task: task.Task, Reward: float64(k % 2)}})
		}
	}
	if _, err := db.Commit(&b); err != nil {
		t.Fatal(err)
	}
	builds := 0
	build := func(tasks []record.Task) *graph.Graph { builds++; return DefaultBuildGraph(tasks) }
	l := loader{db: db, build: build}
	st, err := l.load()
	if err != nil {
		t.Fatal(err)
	}
	sorted := sortedTasks(cat)
	for i, task := range sorted {
		if i >= st.g.Len() || nodeName(st.g, i) != task.Env+"/"+task.Task {
			t.Fatalf("graph nodes %v are not the catalogue in storage order", st.g.Nodes)
		}
	}
	want := graph.TextFeatures(sorted)
	checkFeatures(t, "catalogue", st.g, want)
	if want.NNZ() == 0 || len(want.Row(slices.IndexFunc(sorted, func(x record.Task) bool { return x.Task == "s3" }))) != 1 {
		t.Fatalf("expected features %v: this test proves little", want)
	}

	// Rollouts of tasks with no catalogue row: one in a new environment that sorts first, one
	// among the travel tasks, one after every other. The graph grows (no new build).
	old := map[string][]int32{}
	for i := range st.g.Len() {
		old[nodeName(st.g, i)] = slices.Clone(st.g.Feat.Row(i))
	}
	oldDim := st.g.Feat.Dim
	b = storage.Batch{Rollouts: []storage.Rollout{
		{Rollout: record.Rollout{Env: "air", Task: "x", Reward: 1}},
		{Rollout: record.Rollout{Env: "travel", Task: "t15", Reward: 0}},
		{Rollout: record.Rollout{Env: "zoo", Task: "z", Reward: 1}},
	}}
	if _, err := db.Commit(&b); err != nil {
		t.Fatal(err)
	}
	st, err = l.load()
	if err != nil {
		t.Fatal(err)
	}
	if builds != 1 {
		t.Fatalf("tasks first seen in rollouts made %d builds, want 1: the grow path was not taken", builds)
	}
	g := st.g
	if g.Feat == nil || g.Len() != len(cat)+3 || g.Feat.Len() != g.Len() {
		t.Fatalf("grown graph: %d nodes (want %d), features %v", g.Len(), len(cat)+3, g.Feat)
	}
	if g.Feat.Dim != oldDim {
		t.Errorf("grown graph: Dim %d, want %d as before", g.Feat.Dim, oldDim)
	}
	seen := 0
	for i := range g.Len() {
		name := nodeName(g, i)
		row, ok := old[name]
		if !ok {
			row = nil // a task with no catalogue row has no features
		} else {
			seen++
		}
		if !slices.Equal(g.Feat.Row(i), row) {
			t.Errorf("grown graph: node %s has features %v, want %v", name, g.Feat.Row(i), row)
		}
	}
	if seen != len(cat) {
		t.Errorf("grown graph has %d of the %d catalogue tasks", seen, len(cat))
	}
	// the same as a loader that reads the whole database afresh
	fresh, err := (&loader{db: db, build: DefaultBuildGraph}).load()
	if err != nil {
		t.Fatal(err)
	}
	checkFeatures(t, "grown graph against a fresh load", g, fresh.g.Feat)

	// a catalogue row for a task first seen in rollouts: the graph is read again, and the
	// task has its features
	desc := record.Task{Env: "travel", Task: "t15", Text: "hotel booking for Oslo", Tools: []string{"bookings"}}
	if _, err := db.Commit(&storage.Batch{Tasks: []record.Task{desc}}); err != nil {
		t.Fatal(err)
	}
	if st, err = l.load(); err != nil {
		t.Fatal(err)
	}
	if builds != 2 {
		t.Errorf("a new catalogue row: %d builds, want 2", builds)
	}
	all := sortedTasks(append(slices.Clone(cat), desc,
		record.Task{Env: "air", Task: "x"}, record.Task{Env: "zoo", Task: "z"}))
	checkFeatures(t, fmt.Sprintf("after describing %s/%s", desc.Env, desc.Task), st.g, graph.TextFeatures(all))
}

// A reworded catalogue row whose adjacency does not change (an isolated task: EdgeWrites does
// not move, with or without the Adjacency hook) must give the loader the new features, as a
// fresh process reading the same database gets (storage's CatalogWrites moves).
func TestLoaderReadsFeaturesAgainWhenATaskIsReworded(t *testing.T) {
	for _, hook := range []bool{false, true} {
		db := storagetest.Open(t)
		cat := featureCatalog()
		k := NewEdgeKeeper(graph.Options{})
		b := storage.Batch{Tasks: cat}
		if hook {
			b.Adjacency = k.OnTasks
		}
		if _, err := db.Commit(&b); err != nil {
			t.Fatal(err)
		}
		l := &loader{db: db, build: DefaultBuildGraph}
		if _, err := l.load(); err != nil {
			t.Fatal(err)
		}
		// s3 has only a tag "empty": give it a tag no other task has, so it stays isolated
		x := record.Task{Env: "shop", Task: "s3", Tags: []string{"unique", "other"}}
		b = storage.Batch{Tasks: []record.Task{x}}
		if hook {
			b.Adjacency = k.OnTasks
		}
		if _, err := db.Commit(&b); err != nil {
			t.Fatal(err)
		}
		after, err := l.load()
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := (&loader{db: db, build: DefaultBuildGraph}).load()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("hook=%v: cached Dim %d, fresh Dim %d", hook, after.g.Feat.Dim, fresh.g.Feat.Dim)
		if after.g.Feat.Dim != fresh.g.Feat.Dim {
			t.Errorf("hook=%v: after a reword the cached loader has Dim %d, a fresh process %d", hook, after.g.Feat.Dim, fresh.g.Feat.Dim)
		}
	}
}
