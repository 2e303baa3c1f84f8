package batcher

import (
	"fmt"
	"math"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/stats"
)

// sizedColdWorld is a catalogue with no rollouts and no edges, in environments of the given
// sizes: every task has the same score, so quotas follow the sizes alone.
func sizedColdWorld(t *testing.T, sizes []int) world {
	t.Helper()
	var envs []string
	var nodes []graph.Node
	for e, n := range sizes {
		envs = append(envs, fmt.Sprintf("env%d", e))
		for k := range n {
			nodes = append(nodes, graph.Node{Env: int32(e), Task: fmt.Sprintf("t%04d", k)})
		}
	}
	g := graph.New(envs, nodes, make([][]graph.Edge, len(nodes)))
	tasks := make([]stats.Task, len(nodes))
	preds, err := propagate.Predict(g, tasks, 1, propagate.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	return world{g: g, tasks: tasks, preds: preds, step: 1}
}

// TestQuotaSizeShares: an environment's share is 0.7 × its value share + 0.3 × its size
// share, with value ∝ min(n, B)^(1−α)·n^α and size share ∝ n^α. α = 0 is the equal-quota rule
// (values capped at one batch, smoothed towards uniform); α = 1 follows the sizes; the quotas
// keep their minimum and maximum whatever α.
func TestQuotaSizeShares(t *testing.T) {
	sizes := []int{400, 60, 40, 24}
	w := sizedColdWorld(t, sizes)
	req := Request{Size: 40, GroupSize: 8, Step: 1, Seed: 3}
	for _, tc := range []struct {
		alpha float64
		share []float64 // worked out by hand from the rule above
		slots []int     // env0 is held at MaxShare (20 of 40); the minimum is 5
	}{
		{0, []float64{0.2694, 0.2694, 0.2694, 0.1917}, nil},
		{0.5, []float64{0.5237, 0.2028, 0.1656, 0.1079}, []int{20, 8, 7, 5}},
		{1, []float64{0.7634, 0.1145, 0.0763, 0.0458}, []int{20, 8, 7, 5}},
	} {
		p := DefaultParams()
		p.QuotaSize = tc.alpha
		b := w.sel(t, req, p)
		checkBatch(t, w, req, p, b)
		for e, q := range b.Quotas {
			if math.Abs(q.Share-tc.share[e]) > 1e-4 {
				t.Errorf("α %v: env%d share %.4f, want %.4f", tc.alpha, e, q.Share, tc.share[e])
			}
			if tc.slots != nil && q.Slots != tc.slots[e] {
				t.Errorf("α %v: env%d %d slots, want %d", tc.alpha, e, q.Slots, tc.slots[e])
			}
		}
	}
}

func TestQuotaSizeValidated(t *testing.T) {
	for _, a := range []float64{-0.1, 1.1, math.NaN()} {
		p := DefaultParams()
		p.QuotaSize = a
		if err := p.Validate(); err == nil {
			t.Errorf("quota size %v accepted", a)
		}
	}
}

// TestDefaultQuotasFollowTheCatalogue: by default (α = 1) a cold start gives the big
// environment as much as MaxShare allows and the small ones their minimum and a little more,
// instead of the equal quotas of α = 0.
func TestDefaultQuotasFollowTheCatalogue(t *testing.T) {
	w := sizedColdWorld(t, []int{400, 60, 40, 24})
	req := Request{Size: 40, GroupSize: 8, Step: 1, Seed: 3}
	b := w.sel(t, req, DefaultParams())
	want := []int{20, 8, 7, 5}
	for e, q := range b.Quotas {
		if q.Slots != want[e] {
			t.Errorf("default quotas: env%d %d slots, want %d", e, q.Slots, want[e])
		}
	}
}
