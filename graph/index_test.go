package graph_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/graph/graphtest"
	"github.com/envsched/envsched/record"
)

// TestIncrementalAddIndexesEachDocOnce replaces tasks again and again in small Adds (no full
// build): their neighbours are scored again each time, and must not be indexed again (the
// index would grow with every Add, and duplicate postings double partial dot products, the
// candidates' bounds).
func TestIncrementalAddIndexesEachDocOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		emb  bool
	}{{"text", false}, {"text and embeddings", true}} {
		t.Run(tc.name, func(t *testing.T) {
			all := graphtest.Catalog(1500, 4, 21)
			if tc.emb {
				rng := rand.New(rand.NewPCG(4, 4))
				for i := range all {
					if i%2 == 0 {
						all[i].Embedding = []float32{float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64()), 1}
					}
				}
			}
			b := graph.NewBuilder(graph.Options{})
			b.Add(all)
			if err := graph.CheckIndex(b); err != nil {
				t.Fatalf("%s: %v", "after the first Add", err)
			}
			rng := rand.New(rand.NewPCG(9, 9))
			for round := range 6 {
				var rows []record.Task
				for range 15 {
					r := all[rng.IntN(len(all))]
					r.Text = all[rng.IntN(len(all))].Text + fmt.Sprintf(" round%d", round)
					rows = append(rows, r)
				}
				rows = append(rows, record.Task{Env: all[round].Env, Task: all[round].Task}) // emptied
				changed := b.Add(rows)
				if len(changed) <= len(rows) {
					t.Fatalf("round %d: %d changed keys: no neighbour was scored again, the test tests nothing", round, len(changed))
				}
				if err := graph.CheckIndex(b); err != nil {
					t.Fatalf("%s: %v", fmt.Sprintf("after replacing round %d", round), err)
				}
			}
		})
	}
}

// TestDropIndexKeepsTheGraph drops the index of a builder after a full build and after an
// incremental Add: the graph (keys, adjacency, snapshot, new nodes) is the same, the index is
// gone, and adding again panics rather than scoring against nothing.
func TestDropIndexKeepsTheGraph(t *testing.T) {
	all := withEmbeddings(graphtest.Catalog(1300, 4, 31), 5)
	for _, tc := range []struct {
		name string
		adds [][]record.Task
	}{
		{"one Add", [][]record.Task{all}},
		{"an incremental Add last", [][]record.Task{all[:1280], all[1280:]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := graph.NewBuilder(graph.Options{})
			for _, add := range tc.adds {
				b.Add(add)
			}
			keys, snap := b.Keys(), dump(b.Snapshot())
			adj := adjacencies(b, all)
			last := tc.adds[len(tc.adds)-1]
			isNew := b.IsNew(graph.NodeKey{Env: last[0].Env, Task: last[0].Task})
			if graph.IndexEntries(b) == 0 {
				t.Fatal("setup: the builder holds no index")
			}
			b.DropIndex()
			if n := graph.IndexEntries(b); n != 0 {
				t.Errorf("%d index entries after DropIndex, want 0", n)
			}
			if !slices.Equal(keys, b.Keys()) || !sameDump(snap, dump(b.Snapshot())) {
				t.Error("keys or snapshot changed by DropIndex")
			}
			for k, es := range adjacencies(b, all) {
				if !slices.Equal(es, adj[k]) {
					t.Fatalf("%v: adjacency %v after DropIndex, %v before", k, es, adj[k])
				}
			}
			if b.IsNew(graph.NodeKey{Env: last[0].Env, Task: last[0].Task}) != isNew {
				t.Error("IsNew changed by DropIndex")
			}
			if b.Flush() != nil {
				t.Error("Flush with nothing staged returned keys")
			}
			defer func() {
				if recover() == nil {
					t.Error("Add after DropIndex did not panic")
				}
			}()
			b.Add(all[:1])
		})
	}
}
