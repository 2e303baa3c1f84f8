package propagate

import (
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

// lowMatchGroups are re-chosen groups as selection's picks: 40 predicted informative (mean
// ½, count 10: 4·E[p(1−p)] = 0.91) of which half came back all-equal, and 20 predicted to
// teach little (mean 0.1, count 10: 0.33), every one all-equal.
func lowMatchGroups() []group {
	var out []group
	for i := range 40 {
		out = append(out, group{b: Baseline{Env: "e", Tried: true, Pred: 0.5, Count: 10}, k: int64(4 * (i % 2)), n: 8})
	}
	for range 20 {
		out = append(out, group{b: Baseline{Env: "e", Tried: true, Pred: 0.1, Count: 10}, k: 0, n: 8})
	}
	return out
}

// TestLowValueRechosenMatchedApart (Params.LowMatch): the re-chosen picks predicted to teach
// little are matched by a factor of their own, which makes them more degenerate than the one
// factor fitted on all does; the others' factor is fitted on them alone. Off, no low factor
// is stored and the one factor sees every group.
func TestLowValueRechosenMatchedApart(t *testing.T) {
	run := func(low bool) Dispersion {
		p := DefaultParams()
		p.LowMatch = low
		var d drift
		d.start(State{}, p)
		d.matchRechosen(lowMatchGroups())
		return d.disp
	}
	on, off := run(true), run(false)
	t.Logf("on: factor %.4f, low factor %.4f; off: factor %.4f, low factor %v", on.RechosenFactor, on.LowFactor, off.RechosenFactor, off.LowFactor)
	if off.LowFactor != 0 || len(off.LowPending) != 0 {
		t.Errorf("off: low factor %v, %d pending", off.LowFactor, len(off.LowPending))
	}
	if !(on.LowFactor > 0 && on.LowFactor < on.RechosenFactor) {
		t.Errorf("low factor %v, re-chosen factor %v: want the low-value picks' count cut more", on.LowFactor, on.RechosenFactor)
	}
	if !(on.RechosenFactor > off.RechosenFactor) {
		t.Errorf("re-chosen factor %v with the low-value groups apart, %v with them: want it larger apart (they are all degenerate)",
			on.RechosenFactor, off.RechosenFactor)
	}
}

// TestLowValueRechosenPickAnswered: Pick answers a re-chosen pick predicted to teach little
// with the low factor, and one predicted informative as before.
func TestLowValueRechosenPickAnswered(t *testing.T) {
	nodes := []graph.Node{{Env: 0, Task: "easy"}, {Env: 0, Task: "coin"}}
	g := graph.New([]string{"e"}, nodes, nil)
	tasks := make([]stats.Task, 2)
	var grp stats.Group
	for j := range 40 {
		tasks[0].Add(1, 1, 1, true, &grp, stats.DefaultDecay)
		tasks[1].Add(float64(j%2), 1, 1, true, &grp, stats.DefaultDecay)
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
	st.Dispersion.RechosenFactor = 1
	with := st
	with.Dispersion.LowFactor = 0.25
	easy, coin := preds[0], preds[1]
	if got, want := pr.Pick(with, easy, true, false), pr.Pick(st, easy, true, false); !(got.PDeg > want.PDeg) {
		t.Errorf("low-value pick: chance %v with the low factor ¼, %v without: want higher", got.PDeg, want.PDeg)
	}
	if got, want := pr.Pick(with, coin, true, false), pr.Pick(st, coin, true, false); got != want {
		t.Errorf("informative pick: %+v with the low factor, %+v without", got, want)
	}
	if got, want := pr.Pick(with, easy, true, true), pr.Pick(st, easy, true, true); got != want {
		t.Errorf("random slot: %+v with the low factor, %+v without", got, want)
	}
}
