package batcher

import (
	"math"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/stats"
)

// bruteLasting is ExpectedLasting for 0/1 rewards by numerical integration over p ~ Beta(a, b):
// E[Σ_{k=1..h} (1−d(p))^k]/h with d(p) = p^g + (1−p)^g.
func bruteLasting(a, b float64, g, h int) float64 {
	const n = 200000
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	ld, _ := math.Lgamma(a + b)
	var acc, w float64
	for k := 0; k < n; k++ {
		p := (float64(k) + 0.5) / n
		dens := math.Exp((a-1)*math.Log(p) + (b-1)*math.Log(1-p) + ld - lb - lc)
		inf := 1 - math.Pow(p, float64(g)) - math.Pow(1-p, float64(g))
		v := 0.0
		for k := 1; k <= h; k++ {
			v += math.Pow(inf, float64(k))
		}
		acc += dens * v / float64(h)
		w += dens
	}
	return acc / w
}

func TestExpectedLastingMatchesIntegral(t *testing.T) {
	for _, c := range []struct {
		a, b float64
		g, h int
	}{{2, 3, 8, 1}, {2, 3, 8, 2}, {1.5, 1.5, 4, 5}, {5, 20, 8, 10}, {30, 2, 16, 16}, {3, 3, 2, 2}, {1.4, 7.6, 8, 8}, {1.2, 1.8, 8, 16}} {
		pr := propagate.Prediction{Alpha: c.a, Beta: c.b}
		got, want := ExpectedLasting(&pr, c.g, c.h), bruteLasting(c.a, c.b, c.g, c.h)
		if math.Abs(got-want) > 1e-3 {
			t.Errorf("Beta(%g, %g), g=%d, h=%d: ExpectedLasting %.5f, integral %.5f", c.a, c.b, c.g, c.h, got, want)
		}
	}
	// h = 1 is the chance of an informative group now.
	pr := propagate.Prediction{Alpha: 2, Beta: 3}
	if got, want := ExpectedLasting(&pr, 8, 1), 1-propagate.BetaBinomialDegenerate(2, 3, 8); math.Abs(got-want) > 1e-12 {
		t.Errorf("h=1: %g, want 1 − PDeg = %g", got, want)
	}
}

func TestExpectedLastingEdges(t *testing.T) {
	pr := propagate.Prediction{Alpha: 2, Beta: 2}
	if v := ExpectedLasting(&pr, 1, 4); v != 0 {
		t.Errorf("g=1: %g, want 0", v)
	}
	huge := propagate.Prediction{Alpha: 1e15, Beta: 1e15}
	for _, h := range []int{1, 2, MaxHorizon, 1000} {
		if v := ExpectedLasting(&huge, 16, h); !(v > 0.99 && v <= 1) {
			t.Errorf("p = ½ known exactly, g=16, h=%d: %g, want about 1 (and no overflow)", h, v)
		}
	}
	sure := propagate.Prediction{Alpha: 1e9, Beta: 1}
	if v := ExpectedLasting(&sure, 8, MaxHorizon); !(v >= 0 && v < 1e-6) {
		t.Errorf("p = 1 known exactly: %g, want 0", v)
	}
	zero := propagate.Prediction{}
	if v := ExpectedLasting(&zero, 8, 4); v != 0 {
		t.Errorf("no posterior: %g, want 0", v)
	}
}

// sameInformative finds b such that Beta(a, b) has chance inf of an informative group of g, by
// bisection on b (the chance falls as b grows past a).
func sameInformative(t *testing.T, a, inf float64, g int) float64 {
	lo, hi := a, 1e6
	for range 200 {
		mid := (lo + hi) / 2
		if 1-propagate.BetaBinomialDegenerate(a, mid, g) > inf {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// A task seen unequal once (posterior narrower, near 0) and an untried task of a bimodal
// environment (posterior wide) with the same chance of an informative group now: the
// one-step measure cannot tell them apart; over a horizon of several steps lasting must
// prefer the untried one, which if informative is likely to stay so.
func TestLastingPrefersWhatStaysInformative(t *testing.T) {
	const g = 8
	wide := propagate.Prediction{Alpha: 0.3, Beta: 0.5}
	inf := 1 - propagate.BetaBinomialDegenerate(wide.Alpha, wide.Beta, g)
	narrow := propagate.Prediction{Alpha: 2}
	narrow.Beta = sameInformative(t, narrow.Alpha, inf, g)
	if d := inf - (1 - propagate.BetaBinomialDegenerate(narrow.Alpha, narrow.Beta, g)); math.Abs(d) > 1e-9 {
		t.Fatalf("set-up: informative chances differ by %g", d)
	}
	if d := ExpectedLasting(&wide, g, 1) - ExpectedLasting(&narrow, g, 1); math.Abs(d) > 1e-9 {
		t.Errorf("h=1: the two differ by %g, want equal", d)
	}
	lw, ln := ExpectedLasting(&wide, g, 8), ExpectedLasting(&narrow, g, 8)
	if !(lw > ln+0.02) {
		t.Errorf("lasting over 8 steps: wide %.4f, narrow %.4f (both informative now with chance %.4f): want the wide one clearly ahead", lw, ln, inf)
	}
	// And in a whole selection: one slot, the two candidates in one environment.
	// Both orders, so that the tie-break cannot be what chooses.
	p := DefaultParams()
	p.Exploit, p.CoverageWeight, p.RandomShare, p.Transfer = ExploitLasting, 0, 0, 0
	if got := selectTwo(t, wide, narrow, p); got != 0 {
		t.Errorf("lasting chose node %d, want the wide posterior (0)", got)
	}
	if got := selectTwo(t, narrow, wide, p); got != 1 {
		t.Errorf("lasting chose node %d, want the wide posterior (1)", got)
	}
}

// selectTwo selects one task of two tried tasks (one environment, no edges) with the given
// predictions and returns the node chosen.
func selectTwo(t *testing.T, a, b propagate.Prediction, p Params) int {
	t.Helper()
	nodes := []graph.Node{{Env: 0, Task: "a"}, {Env: 0, Task: "b"}}
	g := graph.New([]string{"env"}, nodes, make([][]graph.Edge, 2))
	// Each task gave 8 informative groups of 9: the measured horizon is 8.
	tasks := []stats.Task{{Rollouts: 72, Groups: 9, Degenerate: 1, LastChosen: 1}, {Rollouts: 72, Groups: 9, Degenerate: 1, LastChosen: 1}}
	if h := LastingHorizon(tasks); h != 8 {
		t.Fatalf("set-up: horizon %d, want 8", h)
	}
	bt, err := Select(g, []propagate.Prediction{a, b}, tasks, Request{Size: 1, GroupSize: 8, Step: 2, Seed: 1}, p)
	if err != nil {
		t.Fatal(err)
	}
	return bt.Picks[0].Node
}

func TestLastingHorizon(t *testing.T) {
	for _, c := range []struct {
		name  string
		tasks []stats.Task
		want  int
	}{
		{"nothing rolled out", []stats.Task{{}, {}}, 1},
		{"only degenerate groups", []stats.Task{{Groups: 5, Degenerate: 5}}, 1},
		{"mean over tasks found informative", []stats.Task{{Groups: 4, Degenerate: 1}, {Groups: 6, Degenerate: 1}, {Groups: 9, Degenerate: 9}}, 4},
		{"rounded", []stats.Task{{Groups: 3}, {Groups: 4}}, 4},
		{"bounded", []stats.Task{{Groups: 500}}, MaxHorizon},
	} {
		if got := LastingHorizon(c.tasks); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
