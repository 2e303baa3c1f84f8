package batcher

import (
	"errors"
	"testing"
)

// TestRetryCoverageWeighsTriedTasks: RetryCoverage multiplies the uncertainty and staleness of
// every task rolled out before and nothing else (not its novelty, not its exploitation value,
// not any part of a task never tried), and with it low selection re-tries fewer tasks for
// coverage.
func TestRetryCoverageWeighsTriedTasks(t *testing.T) {
	w := randomWorld(t, 2000, 8, 3, 0.5)
	req := Request{Size: 64, GroupSize: 8, Step: w.step, Seed: 5}
	valuesWith := func(f float64) []values {
		p := DefaultParams()
		p.RetryCoverage = f
		allowed, err := allowedEnvs(w.g, req)
		if err != nil {
			t.Fatal(err)
		}
		s := newSelector(new(Selector), w.g, w.preds, w.tasks, req, p, allowed)
		out := make([]values, w.g.Len())
		for i := range out {
			out[i] = s.values(i)
		}
		return out
	}
	one, half := valuesWith(1), valuesWith(0.5)
	tried := 0
	for i := range one {
		want := one[i]
		if w.tasks[i].Rollouts > 0 {
			want.uncertain, want.stale = 0.5*want.uncertain, 0.5*want.stale
			tried++
		}
		if half[i] != want {
			t.Fatalf("node %d (rollouts %d): values %+v, want %+v", i, w.tasks[i].Rollouts, half[i], want)
		}
	}
	if tried == 0 || tried == len(one) {
		t.Fatalf("%d of %d tasks tried: the world does not have both", tried, len(one))
	}
	all := randomWorld(t, 2000, 8, 3, 1) // every task tried: coverage picks are re-tries
	coverRetries := func(f float64) int {
		p := DefaultParams()
		p.RetryCoverage, p.CoverageWeight = f, 3 // coverage outweighs exploitation often
		b := all.sel(t, req, p)
		checkBatch(t, all, req, p, b)
		n := 0
		for _, pk := range b.Picks {
			if pk.ForCoverage() && all.tasks[pk.Node].Rollouts > 0 {
				n++
			}
		}
		return n
	}
	full, low := coverRetries(1), coverRetries(0.1)
	if full == 0 || low >= full {
		t.Errorf("re-tries chosen for coverage: %d with the coverage of tried tasks whole, %d with a tenth: want fewer, from some", full, low)
	}
	for _, bad := range []float64{-0.1, 1.5} {
		p := DefaultParams()
		p.RetryCoverage = bad
		if err := p.Validate(); !errors.Is(err, ErrParams) {
			t.Errorf("retry coverage %v: %v, want ErrParams", bad, err)
		}
	}
}

func TestPickForCoverage(t *testing.T) {
	for _, c := range []struct {
		p    Pick
		want bool
	}{
		{Pick{Exploit: 0.1, Coverage: 0.2}, true},
		{Pick{Exploit: 0.2, Coverage: 0.2}, false},
		{Pick{Exploit: 0.3, Coverage: 0.2}, false},
		{Pick{Exploit: 0.1, Coverage: 0.2, Random: true}, false},
	} {
		if got := c.p.ForCoverage(); got != c.want {
			t.Errorf("%+v: for coverage %v, want %v", c.p, got, c.want)
		}
	}
}
