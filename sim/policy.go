package sim

import (
	"math/rand/v2"
)

// View is what a policy sees when it chooses a batch: the step, the sizes, the catalogue and a
// random source seeded for this (seed, policy, step). Only the references (oracle,
// envsched-truth) may ask Truth.
type View struct {
	Step  int // 1, 2, …
	Size  int // B, tasks to train on
	Group int // G, rollouts per task
	World *World
	Rand  *rand.Rand
	truth func(t int) float64
}

// Truth is the true success probability of training task t now; only the references use it.
func (v *View) Truth(t int) float64 { return v.truth(t) }

// Policy chooses the tasks of each training step and learns from their groups.
type Policy interface {
	// Name is the policy's name in tables and plots.
	Name() string
	// Choose returns the training task indices of this step, distinct, in the order to roll
	// them out: Size of them, or up to Size·Oversample() for an Oversampler.
	Choose(v *View) ([]int, error)
	// Observe gives the policy every group rolled out this step, kept or not.
	Observe(step int, groups []Group)
}

// Oversampler is a Policy that rolls out more tasks than it trains on (dynamic sampling):
// candidates are rolled out B at a time, degenerate groups are dropped, and the step trains on
// the first B informative groups; every rollout spent counts against the budget.
type Oversampler interface {
	Policy
	// Oversample is the most chunks of B tasks rolled out in one step.
	Oversample() int
}

// PolicyNames lists the policies Run compares by default, in table order; ExtraPolicyNames the
// others it knows.
func PolicyNames() []string {
	return []string{
		"envsched", "random", "uniform-env", "dapo", "greso", "mopps", "env-bandit", "oracle", "envsched-truth",
		"envsched-nograph", "envsched-notext", "envsched-nofeatures", "envsched-norechosen", "envsched-nocalib", "envsched-nocross",
		"envsched-noquota", "envsched-nopenalty", "envsched-nodecay", "envsched-nocovreturn",
	}
}

// ExtraPolicyNames lists the policies Run knows that are not in the default list: experimental
// variants of envsched, compared only when named (`envsched sim --policies`).
func ExtraPolicyNames() []string {
	return []string{"envsched-stuck", "envsched-extreme", "envsched-driftcentre"}
}

// pickDistinct draws n distinct task indices from pool in random order (fewer if the pool is
// smaller).
func pickDistinct(rng *rand.Rand, pool []int, n int) []int {
	n = min(n, len(pool))
	out := make([]int, 0, n)
	seen := make(map[int]bool, n)
	for len(out) < n {
		t := pool[rng.IntN(len(pool))]
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// allTasks is [0, n).
func allTasks(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// randomPolicy draws B tasks uniformly from the catalogue: what most trainers do.
type randomPolicy struct{ pool []int }

func (p *randomPolicy) Name() string { return "random" }

func (p *randomPolicy) Choose(v *View) ([]int, error) {
	if p.pool == nil {
		p.pool = allTasks(len(v.World.Tasks))
	}
	return pickDistinct(v.Rand, p.pool, v.Size), nil
}

func (p *randomPolicy) Observe(int, []Group) {}

// uniformEnvPolicy draws an environment uniformly for each slot, then a task of it uniformly.
type uniformEnvPolicy struct{}

func (uniformEnvPolicy) Name() string { return "uniform-env" }

func (uniformEnvPolicy) Choose(v *View) ([]int, error) {
	w := v.World
	out := make([]int, 0, v.Size)
	seen := map[int]bool{}
	for tries := 0; len(out) < v.Size && tries < 100*v.Size; tries++ {
		env := w.EnvTasks[v.Rand.IntN(len(w.EnvTasks))]
		t := env[v.Rand.IntN(len(env))]
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, nil
}

func (uniformEnvPolicy) Observe(int, []Group) {}
