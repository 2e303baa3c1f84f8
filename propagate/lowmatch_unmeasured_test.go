package propagate

import (
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

// TestLowFactorAppliedWhileRechosenUnmeasured: when every re-chosen pick that came
// back was predicted to teach little (late in training, "best predicted variance left"), the
// call measures the low-value factor but never the re-chosen one (its groups all went to the
// low side). Corrections (status.json, stats, metrics) then shows rechosen_low_factor as the
// measured value, "what the next call uses"; but Picker applies the low factor only when
// validFactor(RechosenFactor) != 0 (pickCorrection returns false first), so the answer's
// p_degenerate is the one without it. It failed before the fix: the measured factor was never used (review11b).
func TestLowFactorAppliedWhileRechosenUnmeasured(t *testing.T) {
	// The drift measures: 20 low-value re-chosen groups, no informative ones.
	var d drift
	d.start(State{}, DefaultParams())
	var low []group
	for range 20 {
		low = append(low, group{b: Baseline{Env: "e", Tried: true, Pred: 0.1, Count: 10}, k: 0, n: 8})
	}
	d.matchRechosen(low)
	if d.disp.RechosenFactor != 0 || validFactor(d.disp.LowFactor) == 0 {
		t.Fatalf("setup: re-chosen factor %v, low factor %v: want 0 and a measured one", d.disp.RechosenFactor, d.disp.LowFactor)
	}

	nodes := []graph.Node{{Env: 0, Task: "easy"}}
	g := graph.New([]string{"e"}, nodes, nil)
	tasks := make([]stats.Task, 1)
	var grp stats.Group
	for range 40 {
		tasks[0].Add(1, 1, 1, true, &grp, stats.DefaultDecay)
	}
	pr, err := NewPredictor(DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	preds, st, err := pr.Predict(g, tasks, 2, State{})
	if err != nil {
		t.Fatal(err)
	}
	preds = clonePreds(preds)
	without := st
	with := st
	with.Dispersion.RechosenFactor, with.Dispersion.LowFactor = d.disp.RechosenFactor, d.disp.LowFactor
	shown := with.Corrections().RechosenLowFactor
	got, base := pr.Pick(with, preds[0], true, false), pr.Pick(without, preds[0], true, false)
	t.Logf("low factor %.4f shown %.4f; p_degenerate %v with it, %v without", with.Dispersion.LowFactor, shown, got.PDeg, base.PDeg)
	if shown == 1 {
		t.Fatalf("setup: shown low factor 1")
	}
	if !(got.PDeg > base.PDeg) {
		t.Errorf("low-value re-chosen pick: p_degenerate %v with the measured low factor %.4f (shown as rechosen_low_factor), %v without: "+
			"the factor is measured and shown but not applied while rechosen_factor is unmeasured", got.PDeg, shown, base.PDeg)
	}
}
