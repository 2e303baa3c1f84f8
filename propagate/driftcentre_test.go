package propagate

import (
	"math"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

// slopeOnly is a dispersion likelihood whose most likely correction is the given slope alone
// (scale 1, η 0, θ 1), as if measured on one group.
func slopeOnly(t *testing.T, slope float64) *Likelihood {
	t.Helper()
	l := newLikelihood()
	for j, k := range dispersionGrid {
		if k == (correction{1, slope, 0, 1, 0}) {
			l.LL[j] = 10
			l.N = 1
			return l
		}
	}
	t.Fatalf("slope %v not on the grid", slope)
	return nil
}

// TestDriftCentreAppliesTheOffsetInFull: an untried task at its environment's decayed mean,
// with the environment's drift offset off and a fitted slope of ½, is predicted at the
// environment's level after the offset with Params.DriftCentre (the slope shrinks departures
// from that level, of which this task has none), and at half the offset without it (the
// centre before the offset: the slope shrinks the offset itself, which is what kept the
// untried picks of the acceptance world giants below their truth).
func TestDriftCentreAppliesTheOffsetInFull(t *testing.T) {
	const off = 0.8
	g := graph.New([]string{"a"}, []graph.Node{{Task: "x"}}, nil)
	st := State{Offsets: map[string]float64{"a": off},
		Dispersion: Dispersion{Env: map[string]*Likelihood{"a": slopeOnly(t, 0.5)}}}
	for _, c := range []struct {
		on   bool
		want float64
	}{{true, sigmoid(off)}, {false, sigmoid(0.5 * off)}} {
		p := DefaultParams()
		p.FeatureRidge = 0 // the environment's mean as the prior: ½, the centre
		p.DriftCentre = c.on
		pr, err := NewPredictor(p)
		if err != nil {
			t.Fatal(err)
		}
		preds, _, err := pr.Predict(g, make([]stats.Task, 1), 1, st)
		if err != nil {
			t.Fatal(err)
		}
		if got := preds[0].Mean; math.Abs(got-c.want) > 1e-9 {
			t.Errorf("DriftCentre %v: mean %.6f, want %.6f", c.on, got, c.want)
		}
	}
}
