package batcher

import (
	"errors"
	"math"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/stats"
)

// freshWorld is one environment of three tasks without edges at step 10: a, tried, last rolled
// out at step 2 with the best prediction; b, tried, last rolled out at step 9 (the step before)
// with a slightly worse one; u, never tried, with the worst. a and b were chosen at the same
// step and hold the same evidence, so that only the age of their rollouts tells them apart.
func freshWorld() (*graph.Graph, []propagate.Prediction, []stats.Task) {
	nodes := []graph.Node{{Env: 0, Task: "a"}, {Env: 0, Task: "b"}, {Env: 0, Task: "u"}}
	g := graph.New([]string{"env"}, nodes, make([][]graph.Edge, len(nodes)))
	preds := []propagate.Prediction{
		{Alpha: 5, Beta: 5, Mean: 0.5, Var: propagate.BetaVariance(5, 5), Own: 8},
		{Alpha: 6, Beta: 4, Mean: 0.6, Var: propagate.BetaVariance(6, 4), Own: 8},
		{Alpha: 1, Beta: 9, Mean: 0.1, Var: propagate.BetaVariance(1, 9)},
	}
	tasks := []stats.Task{
		{Rollouts: 8, Chosen: 1, LastChosen: 9, LastStep: 2},
		{Rollouts: 8, Chosen: 1, LastChosen: 9, LastStep: 9},
		{},
	}
	return g, preds, tasks
}

// TestFreshPrefersRecentEvidence: with Fresh off the better prediction wins; with it on the
// task whose evidence is one step old does, and its exploitation value is not discounted at
// all (its last group was in the step before), while the never-tried task's is never touched.
func TestFreshPrefersRecentEvidence(t *testing.T) {
	g, preds, tasks := freshWorld()
	req := Request{Size: 3, GroupSize: 8, Step: 10, Seed: 3}
	exploit := map[float64]map[string]float64{}
	for _, c := range []struct {
		fresh float64
		first string
	}{{0, "a"}, {0.5, "b"}, {1, "b"}} {
		p := DefaultParams()
		p.RandomShare, p.SimPenalty, p.Fresh = 0, 0, c.fresh
		b, err := Select(g, preds, tasks, req, p)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Nodes[b.Picks[0].Node].Task; got != c.first {
			t.Errorf("fresh %v: chose %s first, want %s", c.fresh, got, c.first)
		}
		exploit[c.fresh] = map[string]float64{}
		for _, pk := range b.Picks {
			exploit[c.fresh][g.Nodes[pk.Node].Task] = pk.Exploit
		}
	}
	for _, f := range []float64{0.5, 1} {
		if exploit[f]["b"] != exploit[0]["b"] || exploit[f]["u"] != exploit[0]["u"] {
			t.Errorf("fresh %v: b %v u %v, want them as with fresh off (%v, %v)", f, exploit[f]["b"], exploit[f]["u"], exploit[0]["b"], exploit[0]["u"])
		}
		// a's last group is 8 steps old: 7 steps of decay past the step before, τ = 10.
		want := exploit[0]["a"] * (1 - f*(1-math.Exp(-0.7)))
		if math.Abs(exploit[f]["a"]-want) > 1e-12 {
			t.Errorf("fresh %v: a's exploit %v, want %v", f, exploit[f]["a"], want)
		}
	}
}

func TestFreshOutOfRange(t *testing.T) {
	for _, f := range []float64{-0.1, 1.5, math.NaN(), math.Inf(1)} {
		p := DefaultParams()
		p.Fresh = f
		if err := p.Validate(); !errors.Is(err, ErrParams) {
			t.Errorf("fresh %v: %v, want ErrParams", f, err)
		}
	}
}
