package graph_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/record"
)

// TestJunkEmbeddingSortingFirstKeepsTheCatalogueBucketed (review11): hostile8 (986f8db) bounds
// the LSH hyperplanes of all embedding lengths together and gives them to lengths first come,
// first served (key order in a full build). So one environment that sorts first with a few rows
// of stray lengths (token embeddings flattened, a length per row: the mistake the bound is for)
// takes the whole bound, and the catalogue's real embeddings, of one length in an environment
// that sorts after it, are not bucketed at all: their near-duplicates are no longer found, and
// nothing says so. The test of 986f8db puts the real environment first ("a") and the stray
// lengths after ("b"); here the order is swapped, with the same bound of 192·40 values (one
// length of 32 fits) and one stray row of length 39.
func TestJunkEmbeddingSortingFirstKeepsTheCatalogueBucketed(t *testing.T) {
	const bound = 192 * 40
	graph.SetMaxPlaneFloats(t, bound)
	rng := rand.New(rand.NewPCG(4, 4))
	vec := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	tasks := []record.Task{{Env: "a-stray", Task: "x", Embedding: vec(39)}} // sorts before "b"
	for i := range 300 {
		tasks = append(tasks, record.Task{Env: "b", Task: fmt.Sprintf("t%03d", i), Embedding: vec(32)})
	}
	for i := range 20 {
		v := slices.Clone(tasks[1+i].Embedding)
		for j := range v {
			v[j] += 0.1 * float32(rng.NormFloat64())
		}
		tasks = append(tasks, record.Task{Env: "b", Task: fmt.Sprintf("dup%02d", i), Embedding: v})
	}
	b := graph.NewBuilder(graph.Options{})
	b.Add(tasks)
	g := b.Snapshot()
	missing := 0
	for i := range 20 {
		a := graph.NodeKey{Env: "b", Task: tasks[1+i].Task}
		if e, ok := edgeOf(g, a, graph.NodeKey{Env: "b", Task: fmt.Sprintf("dup%02d", i)}); !ok || e.Sim < 0.9 {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of 20 planted near-duplicates of the catalogue's 32-length embeddings not linked: one row of another length, "+
			"in an environment sorting first, took the hyperplane bound (%d of %d values held)", missing, graph.PlaneFloats(b), bound)
	}
}
