package propagate

import (
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

// TestBaselineCarriesAMeasurementToANewPredictor: a Predictor given the baseline of the
// nodes that got rollouts measures the same offsets as the Predictor that made the call
// before; without it, it measures nothing.
func TestBaselineCarriesAMeasurementToANewPredictor(t *testing.T) {
	g := graph.New([]string{"a", "b"}, []graph.Node{{Env: 0, Task: "x"}, {Env: 0, Task: "y"}, {Env: 1, Task: "w"}, {Env: 1, Task: "z"}}, nil)
	tasks := make([]stats.Task, 4)
	add := func(i int, r float64, n int, round int64) {
		var grp stats.Group
		for range n {
			tasks[i].Add(r, round, round, true, &grp, 0.9)
		}
	}
	add(0, 0, 8, 1) // x tried before: the re-chosen channel
	old, _ := NewPredictor(DefaultParams())
	if old.Baseline([]int{0}) != nil {
		t.Error("a baseline before any call")
	}
	if _, err := old.Predict(g, tasks, 2); err != nil {
		t.Fatal(err)
	}
	base := old.Baseline([]int{0, 3})
	if len(base) != 2 || base[0].Task != "x" || base[0].Rollouts != 8 || !base[0].Tried || base[1].Task != "z" || base[1].Tried {
		t.Fatalf("baseline %+v", base)
	}
	add(0, 1, 8, 2) // x, re-chosen, now succeeds
	add(3, 1, 8, 2) // z, never tried before, succeeds
	fresh, _ := NewPredictor(DefaultParams())
	fresh.SetBaseline(base)
	blind, _ := NewPredictor(DefaultParams())
	for _, pr := range []*Predictor{old, fresh, blind} {
		if _, err := pr.Predict(g, tasks, 3); err != nil {
			t.Fatal(err)
		}
	}
	if old.Rechosen() <= 0 || old.Offset("b") <= 0 {
		t.Fatalf("rewards above the predictions, yet offsets %v and %v", old.Rechosen(), old.Offset("b"))
	}
	if fresh.Rechosen() != old.Rechosen() || fresh.Offset("b") != old.Offset("b") {
		t.Errorf("with the baseline: re-chosen %v, env b %v; the predictor that made the call before: %v, %v",
			fresh.Rechosen(), fresh.Offset("b"), old.Rechosen(), old.Offset("b"))
	}
	if blind.Rechosen() != 0 || blind.Offset("b") != 0 {
		t.Errorf("without a baseline nothing can be measured, yet %v and %v", blind.Rechosen(), blind.Offset("b"))
	}
	// SetBaseline replaces the previous call as what the next call measures against: w,
	// never rolled out, now fails; measured against the previous call that would pull env b
	// down, measured against an empty baseline nothing moves
	twin, _ := NewPredictor(DefaultParams())
	twin.SetBaseline(base)
	if _, err := twin.Predict(g, tasks, 3); err != nil {
		t.Fatal(err)
	}
	off := old.Offset("b")
	add(2, 0, 8, 3)
	old.SetBaseline(nil)
	if _, err := old.Predict(g, tasks, 4); err != nil {
		t.Fatal(err)
	}
	if old.Offset("b") != off {
		t.Errorf("measured against an empty baseline, yet env b's offset moved: %v → %v", off, old.Offset("b"))
	}
	if _, err := twin.Predict(g, tasks, 4); err != nil {
		t.Fatal(err)
	}
	if !(twin.Offset("b") < off) {
		t.Errorf("measured against the previous call, w's failures should pull env b down from %v: %v", off, twin.Offset("b"))
	}
}
