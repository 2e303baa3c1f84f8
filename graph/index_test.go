package graph_test

import (
	"fmt"
	"math/rand/v2"
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
