package propagate

import (
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

// TestBaselineDecidesWhatIsMeasured: a call measures the rollouts that arrived since the
// baselines of its State, each in the channel its baseline says, and nothing without them;
// the measurement depends on the State alone, not on which Predictor makes the call.
func TestBaselineDecidesWhatIsMeasured(t *testing.T) {
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
	preds, st, err := old.Predict(g, tasks, 2, State{Rechosen: 0.5}) // x predicted above its base
	if err != nil {
		t.Fatal(err)
	}
	base := Baselines(g, tasks, preds, []int{0, 3})
	if len(base) != 2 || base[0].Task != "x" || base[0].Rollouts != 8 || !base[0].Tried || base[1].Task != "z" || base[1].Tried ||
		base[0].Mean != preds[0].base || base[0].Mean == preds[0].Mean {
		t.Fatalf("baseline %+v (x predicted %+v)", base, preds[0])
	}
	add(0, 1, 8, 2) // x, re-chosen, now succeeds
	add(3, 1, 8, 2) // z, never tried before, succeeds
	st.Baseline = base
	_, withBase, _ := old.Predict(g, tasks, 3, st)
	fresh, _ := NewPredictor(DefaultParams())
	_, again, _ := fresh.Predict(g, tasks, 3, st)
	_, blind, _ := fresh.Predict(g, tasks, 3, State{Offsets: st.Offsets, Rechosen: st.Rechosen})
	if withBase.Rechosen <= st.Rechosen || withBase.Offsets["b"] <= 0 {
		t.Fatalf("rewards above the predictions, yet offsets %v and %v", withBase.Rechosen, withBase.Offsets["b"])
	}
	if again.Rechosen != withBase.Rechosen || again.Offsets["b"] != withBase.Offsets["b"] {
		t.Errorf("another Predictor with the same State: re-chosen %v, env b %v; first: %v, %v",
			again.Rechosen, again.Offsets["b"], withBase.Rechosen, withBase.Offsets["b"])
	}
	if blind.Rechosen != st.Rechosen || blind.Offsets["b"] != 0 {
		t.Errorf("without a baseline nothing can be measured, yet %v and %v", blind.Rechosen, blind.Offsets["b"])
	}
	// w, never rolled out and not in the baseline, now fails: measured against a baseline
	// of every node that pulls env b down, against one without w nothing moves
	all := Baselines(g, tasks, preds, nil)
	add(2, 0, 8, 3)
	withBase.Baseline = []Baseline{base[1]}
	withBase.Baseline[0].Rollouts, withBase.Baseline[0].Sum = tasks[3].Rollouts, tasks[3].Sum
	_, none, _ := old.Predict(g, tasks, 4, withBase)
	if none.Offsets["b"] != withBase.Offsets["b"] {
		t.Errorf("w is not in the baseline, yet env b's offset moved: %v → %v", withBase.Offsets["b"], none.Offsets["b"])
	}
	withBase.Baseline = all[2:3]
	_, down, _ := old.Predict(g, tasks, 4, withBase)
	if !(down.Offsets["b"] < withBase.Offsets["b"]) {
		t.Errorf("measured against w's baseline, its failures should pull env b down from %v: %v", withBase.Offsets["b"], down.Offsets["b"])
	}
}
