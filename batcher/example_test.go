package batcher_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/envsched/envsched/batcher"
	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/stats"
)

// Example is the loop of a simulated trainer that calls propagate and batcher in process, with
// no storage: statistics live in a []stats.Task indexed like the graph's nodes, updated with
// stats.Task.Add, and one Predictor is called every step.
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	envs := []string{"bfcl", "tau-retail", "acebench"}
	var nodes []graph.Node
	var truth []float64 // success probabilities, unknown to envsched
	for e := range envs {
		for k := range 40 {
			nodes = append(nodes, graph.Node{Env: int32(e), Task: fmt.Sprintf("t%02d", k)})
			truth = append(truth, []float64{0, 1, rng.Float64()}[rng.IntN(3)]) // a third solved, a third hopeless
		}
	}
	g := graph.New(envs, nodes, nil) // no edges here; graph.Build makes them from the catalogue
	tasks := make([]stats.Task, g.Len())
	pred, _ := propagate.NewPredictor(propagate.DefaultParams())
	var state propagate.State // the drift state, carried from step to step
	const groupSize, steps = 8, 12
	degenerate := make([]int, steps+1)
	for step := int64(1); step <= steps; step++ {
		preds, next, _ := pred.Predict(g, tasks, step, state)
		next.Baseline = propagate.Baselines(g, tasks, preds, nil) // the next step measures drift against this one
		state = next
		req := batcher.Request{Size: 16, GroupSize: groupSize, Step: step, Seed: uint64(step)}
		b, err := batcher.Select(g, preds, tasks, req, batcher.DefaultParams())
		if err != nil {
			panic(err)
		}
		for _, pk := range b.Picks {
			t := &tasks[pk.Node]
			t.Chosen++
			t.LastChosen = step
			var grp stats.Group // one group per task and step
			for range groupSize {
				r := 0.0
				if rng.Float64() < truth[pk.Node] {
					r = 1
				}
				t.Add(r, step, step, true, &grp, stats.DefaultDecay)
			}
			if grp.Min == grp.Max {
				degenerate[step]++
			}
		}
	}
	fmt.Println("degenerate groups of 16, steps 1-3:", degenerate[1:4])
	fmt.Println("degenerate groups of 16, steps 10-12:", degenerate[10:13])
	// Output:
	// degenerate groups of 16, steps 1-3: [11 10 7]
	// degenerate groups of 16, steps 10-12: [3 3 3]
}
