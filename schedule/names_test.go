package schedule

import (
	"fmt"
	"slices"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/storage"
)

// nameIndex finds every name at its position and nothing else: names that differ only in
// where env ends and task begins, empty parts, prefixes, and a table crowded with thousands.
func TestNameIndexFindsEveryNameAndNoOther(t *testing.T) {
	names := []storage.TaskKey{{Env: "", Task: "ab"}, {Env: "a", Task: "b"}, {Env: "ab", Task: ""}, {Env: "ab", Task: "c"}}
	for i := range 5000 {
		names = append(names, storage.TaskKey{Env: fmt.Sprintf("env-%d", i%7), Task: fmt.Sprint("t", i)})
	}
	slices.SortFunc(names, compareKey)
	x := newNameIndex(names)
	for i, k := range names {
		if j, ok := x.find(k.Env, k.Task); !ok || j != i {
			t.Fatalf("find(%q, %q) = %d, %v; want %d", k.Env, k.Task, j, ok, i)
		}
	}
	for _, k := range []storage.TaskKey{{Env: "a", Task: "bc"}, {Env: "", Task: "a"}, {Env: "env-1", Task: "t2"},
		{Env: "env-1", Task: "t"}, {Env: "env-10", Task: "t1"}, {Env: "", Task: ""}} {
		if j, ok := x.find(k.Env, k.Task); ok {
			t.Errorf("find(%q, %q) = %d; want not found", k.Env, k.Task, j)
		}
	}
	if j, ok := newNameIndex(nil).find("a", "b"); ok {
		t.Errorf("empty index found %d", j)
	}
}

// sortByNode orders the edges by their node, keeping each node's edges in their order.
func TestSortByNodeIsStable(t *testing.T) {
	from := []int32{2, 0, 2, 1, 0}
	edges := []graph.Edge{{To: 20}, {To: 1}, {To: 21}, {To: 10}, {To: 2}}
	sortByNode(from, edges)
	if !slices.Equal(from, []int32{0, 0, 1, 2, 2}) {
		t.Errorf("from = %v", from)
	}
	var to []int32
	for _, e := range edges {
		to = append(to, e.To)
	}
	if !slices.Equal(to, []int32{1, 2, 10, 20, 21}) {
		t.Errorf("edges to %v; want 1 2 10 20 21", to)
	}
}

// nodeIndex finds every node of a graph where the binary search finds it and nothing else, and
// follows the graph it is asked for: another graph, and the same one grown by new nodes
// (the loader's graph grows by isolated nodes when tasks first seen in rollouts arrive).
func TestNodeIndexFindsWhatBinarySearchFinds(t *testing.T) {
	var names []storage.TaskKey
	for i := range 3000 {
		names = append(names, storage.TaskKey{Env: fmt.Sprintf("env-%d", i%5), Task: fmt.Sprint("t", i)})
	}
	slices.SortFunc(names, compareKey)
	small, err := grow(&graph.Graph{}, names[:1000])
	if err != nil {
		t.Fatal(err)
	}
	large, err := grow(small, names)
	if err != nil {
		t.Fatal(err)
	}
	var x nodeIndex
	for _, g := range []*graph.Graph{small, large, small} {
		idx := x.of(g)
		st := state{g: g}
		for _, k := range names {
			wi, wok := st.find(k.Env, k.Task)
			if i, ok := idx.find(k.Env, k.Task); ok != wok || ok && i != wi {
				t.Fatalf("%d nodes: find(%q, %q) = %d, %v; binary search %d, %v", g.Len(), k.Env, k.Task, i, ok, wi, wok)
			}
		}
		for _, k := range []storage.TaskKey{{Env: "env-1", Task: "t2"}, {Env: "env-9", Task: "t1"}, {Env: "", Task: ""}} {
			if i, ok := idx.find(k.Env, k.Task); ok {
				t.Errorf("find(%q, %q) = %d; want not found", k.Env, k.Task, i)
			}
		}
	}
	// the same graph value grown in place is indexed again
	g := *small
	idx := x.of(&g)
	g.Nodes = large.Nodes
	g.Envs = large.Envs
	if _, ok := x.of(&g).find(names[2999].Env, names[2999].Task); !ok || idx != &x {
		t.Errorf("a grown graph's new node not found")
	}
}
