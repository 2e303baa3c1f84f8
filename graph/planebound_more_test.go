package graph_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/record"
)

// TestPlaneBoundGoesToTheCommonLengthAndSaysWhatItLeftOut (fix11, sibling of review11's
// plane-bound finding): several stray lengths spread over environments sorting before and after
// the catalogue's own, and a stray length shorter than the real one (it would fit first): the
// bound still goes to the length most rows have, and Unbucketed names every length left out
// with its rows; with room for all, nothing is left out.
func TestPlaneBoundGoesToTheCommonLengthAndSaysWhatItLeftOut(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	vec := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	tasks := []record.Task{
		{Env: "0", Task: "a", Embedding: vec(40)}, {Env: "0", Task: "b", Embedding: vec(40)},
		{Env: "z", Task: "c", Embedding: vec(41)},
	}
	for i := range 50 {
		tasks = append(tasks, record.Task{Env: "m", Task: fmt.Sprintf("t%02d", i), Embedding: vec(32)})
	}
	graph.SetMaxPlaneFloats(t, 192*41) // room for 32, or for one of 40 and 41, not for two
	b := graph.NewBuilder(graph.Options{})
	b.Add(tasks)
	if got, want := b.Unbucketed(), map[int]int{40: 2, 41: 1}; !maps.Equal(got, want) {
		t.Errorf("left out %v; want %v (the 50 rows of length 32 bucketed)", got, want)
	}
	if got := graph.PlaneFloats(b); got != 192*32 {
		t.Errorf("%d hyperplane values held; want %d, those of length 32", got, 192*32)
	}

	graph.SetMaxPlaneFloats(t, 1<<25)
	b = graph.NewBuilder(graph.Options{})
	b.Add(tasks)
	if got := b.Unbucketed(); got != nil {
		t.Errorf("with room for every length, left out %v; want none", got)
	}
}
