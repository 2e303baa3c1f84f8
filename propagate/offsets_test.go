package propagate

import (
	"maps"
	"math"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

func TestSetOffsetsRoundTripAndClamp(t *testing.T) {
	p := DefaultParams()
	p.DriftMax = 0.5
	cases := []struct {
		name string
		in   map[string]float64
		want map[string]float64
	}{
		{"round trip", map[string]float64{"a": 0.125, "b": -0.3, "c": 0}, map[string]float64{"a": 0.125, "b": -0.3, "c": 0}},
		{"clamped to ±DriftMax", map[string]float64{"a": 3, "b": -0.7}, map[string]float64{"a": 0.5, "b": -0.5}},
		{"non-finite ignored", map[string]float64{"a": math.NaN(), "b": math.Inf(1), "c": math.Inf(-1), "d": 0.2}, map[string]float64{"d": 0.2}},
		{"nil clears", nil, map[string]float64{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pr, _ := NewPredictor(p)
			pr.SetOffsets(map[string]float64{"old": 0.1})
			pr.SetOffsets(c.in)
			got := pr.Offsets()
			if !maps.Equal(got, c.want) {
				t.Errorf("Offsets() = %v, want %v", got, c.want)
			}
			got["x"] = 1
			if pr.Offset("x") != 0 {
				t.Error("Offsets returned the Predictor's own map, not a copy")
			}
		})
	}
}

func TestSetOffsetsWithoutDriftCorrectionKeepsNone(t *testing.T) {
	p := DefaultParams()
	p.DriftRate = 0
	pr, _ := NewPredictor(p)
	pr.SetOffsets(map[string]float64{"a": 0.4})
	if got := pr.Offsets(); len(got) != 0 {
		t.Errorf("DriftRate 0: offsets %v, want none", got)
	}
}

// TestRestoredOffsetsPredictLikeTheOriginal measures drift in one Predictor, gives its offsets
// to a new one and checks that both predict the same over the same graph and statistics; a
// new Predictor without them predicts otherwise for the task never rolled out.
func TestRestoredOffsetsPredictLikeTheOriginal(t *testing.T) {
	g := graph.New([]string{"a", "b"}, []graph.Node{{Env: 0, Task: "x"}, {Env: 0, Task: "y"}, {Env: 0, Task: "z"},
		{Env: 1, Task: "u"}, {Env: 1, Task: "v"}}, [][]graph.Edge{{{To: 1, Weight: 0.5}}, {{To: 0, Weight: 0.5}}, nil, nil, nil})
	tasks := make([]stats.Task, g.Len())
	orig, _ := NewPredictor(DefaultParams())
	if _, err := orig.Predict(g, tasks, 1); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 2} { // env a does far better than predicted
		rollGroup(&tasks[i], 1, 1, 1, 1, 1, 1, 1, 1, 1)
	}
	rollGroup(&tasks[3], 1, 0, 0, 0, 0, 0, 0, 0, 0) // env b far worse
	if _, err := orig.Predict(g, tasks, 2); err != nil {
		t.Fatal(err)
	}
	offsets := orig.Offsets()
	if offsets["a"] <= 0 || offsets["b"] >= 0 {
		t.Fatalf("offsets %v: want a > 0 and b < 0, else this test proves nothing", offsets)
	}
	restored, _ := NewPredictor(DefaultParams())
	restored.SetOffsets(offsets)
	fresh, _ := NewPredictor(DefaultParams())
	want := clonePreds(mustCall(t, orig, g, tasks, 2))
	got := mustCall(t, restored, g, tasks, 2)
	if !maps.Equal(orig.Offsets(), offsets) {
		t.Fatalf("no rollouts arrived, yet the original's offsets moved: %v, were %v", orig.Offsets(), offsets)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("node %s: restored %+v, original %+v", g.Nodes[i].Task, got[i], want[i])
		}
	}
	for _, i := range []int{1, 4} { // never rolled out: the whole offset applies
		if none := mustCall(t, fresh, g, tasks, 2)[i].Mean; none == want[i].Mean {
			t.Errorf("node %s: mean %.4f with and without offsets", g.Nodes[i].Task, none)
		}
	}
}

func mustCall(t *testing.T, pr *Predictor, g *graph.Graph, tasks []stats.Task, round int64) []Prediction {
	t.Helper()
	preds, err := pr.Predict(g, tasks, round)
	if err != nil {
		t.Fatal(err)
	}
	return preds
}

func clonePreds(p []Prediction) []Prediction { return append([]Prediction(nil), p...) }
