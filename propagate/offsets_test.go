package propagate

import (
	"maps"
	"math"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

// TestStateOffsetsClampedAndCopied: the offsets a call returns are those it was given,
// clamped to ±DriftMax, without NaN and infinities, in a map of their own.
func TestStateOffsetsClampedAndCopied(t *testing.T) {
	p := DefaultParams()
	p.DriftMax = 0.5
	g := graph.New([]string{"a"}, []graph.Node{{Task: "x"}}, nil)
	cases := []struct {
		name string
		in   map[string]float64
		want map[string]float64
	}{
		{"round trip", map[string]float64{"a": 0.125, "b": -0.3, "c": 0}, map[string]float64{"a": 0.125, "b": -0.3, "c": 0}},
		{"clamped to ±DriftMax", map[string]float64{"a": 3, "b": -0.7}, map[string]float64{"a": 0.5, "b": -0.5}},
		{"non-finite ignored", map[string]float64{"a": math.NaN(), "b": math.Inf(1), "c": math.Inf(-1), "d": 0.2}, map[string]float64{"d": 0.2}},
		{"nil is none", nil, map[string]float64{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pr, _ := NewPredictor(p)
			in := maps.Clone(c.in)
			_, next, err := pr.Predict(g, make([]stats.Task, 1), 1, State{Offsets: in})
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(next.Offsets, c.want) {
				t.Errorf("offsets %v, want %v", next.Offsets, c.want)
			}
			next.Offsets["x"] = 1
			if _, ok := in["x"]; ok {
				t.Error("the returned offsets are the caller's map, not a copy")
			}
		})
	}
}

func TestStateWithoutDriftCorrectionKeepsNoOffsets(t *testing.T) {
	p := DefaultParams()
	p.DriftRate = 0
	pr, _ := NewPredictor(p)
	g := graph.New([]string{"a"}, []graph.Node{{Task: "x"}}, nil)
	withOff, next, _ := pr.Predict(g, make([]stats.Task, 1), 1, State{Offsets: map[string]float64{"a": 0.4}})
	if len(next.Offsets) != 0 {
		t.Errorf("DriftRate 0: offsets %v, want none", next.Offsets)
	}
	m := withOff[0].Mean
	without, _, _ := pr.Predict(g, make([]stats.Task, 1), 1, State{})
	if m != without[0].Mean {
		t.Errorf("DriftRate 0: an offset moved the mean from %v to %v", without[0].Mean, m)
	}
}

func TestStateRechosenClamped(t *testing.T) {
	p := DefaultParams()
	p.RechosenMax = 0.5
	g := graph.New([]string{"a"}, []graph.Node{{Task: "x"}}, nil)
	cases := []struct {
		name     string
		in, want float64
	}{
		{"kept", 0.25, 0.25},
		{"kept negative", -0.125, -0.125},
		{"clamped above", 3, 0.5},
		{"clamped below", -0.75, -0.5},
		{"NaN sets 0", math.NaN(), 0},
		{"+Inf sets 0", math.Inf(1), 0},
		{"-Inf sets 0", math.Inf(-1), 0},
	}
	for _, c := range cases {
		pr, _ := NewPredictor(p)
		if _, next, _ := pr.Predict(g, make([]stats.Task, 1), 1, State{Rechosen: c.in}); next.Rechosen != c.want {
			t.Errorf("%s: re-chosen %v gives %v, want %v", c.name, c.in, next.Rechosen, c.want)
		}
	}
	off := DefaultParams()
	off.RechosenRate = 0
	pr, _ := NewPredictor(off)
	for _, x := range []float64{0.3, -1, 5} {
		if _, next, _ := pr.Predict(g, make([]stats.Task, 1), 1, State{Rechosen: x}); next.Rechosen != 0 {
			t.Errorf("RechosenRate 0: re-chosen %v gives %v, want 0", x, next.Rechosen)
		}
	}
}

// TestRestoredOffsetsPredictLikeTheOriginal measures drift in one chain of calls, gives its
// offsets (and dispersion) to a new Predictor and checks that both predict the same over the same graph and
// statistics; without them the task never rolled out is predicted otherwise.
func TestRestoredOffsetsPredictLikeTheOriginal(t *testing.T) {
	g := graph.New([]string{"a", "b"}, []graph.Node{{Env: 0, Task: "x"}, {Env: 0, Task: "y"}, {Env: 0, Task: "z"},
		{Env: 1, Task: "u"}, {Env: 1, Task: "v"}}, [][]graph.Edge{{{To: 1, Weight: 0.5}}, {{To: 0, Weight: 0.5}}, nil, nil, nil})
	tasks := make([]stats.Task, g.Len())
	orig := newChain(t, DefaultParams())
	orig.call(t, g, tasks, 1)
	for _, i := range []int{0, 2} { // env a does far better than predicted
		rollGroup(&tasks[i], 1, 1, 1, 1, 1, 1, 1, 1, 1)
	}
	rollGroup(&tasks[3], 1, 0, 0, 0, 0, 0, 0, 0, 0) // env b far worse
	orig.call(t, g, tasks, 2)
	offsets := maps.Clone(orig.st.Offsets)
	if offsets["a"] <= 0 || offsets["b"] >= 0 {
		t.Fatalf("offsets %v: want a > 0 and b < 0, else this test proves nothing", offsets)
	}
	want := clonePreds(orig.call(t, g, tasks, 2))
	if !maps.Equal(orig.st.Offsets, offsets) {
		t.Fatalf("no rollouts arrived, yet the original's offsets moved: %v, were %v", orig.st.Offsets, offsets)
	}
	restored, _ := NewPredictor(DefaultParams())
	got, _, _ := restored.Predict(g, tasks, 2, State{Offsets: offsets, Dispersion: orig.st.Dispersion})
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("node %s: restored %+v, original %+v", g.Nodes[i].Task, got[i], want[i])
		}
	}
	for _, i := range []int{1, 4} { // never rolled out: the whole offset applies
		if none := mustCall(t, restored, g, tasks, 2)[i].Mean; none == want[i].Mean {
			t.Errorf("node %s: mean %.4f with and without offsets", g.Nodes[i].Task, none)
		}
	}
}

// mustCall predicts without drift state.
func mustCall(t *testing.T, pr *Predictor, g *graph.Graph, tasks []stats.Task, round int64) []Prediction {
	t.Helper()
	preds, _, err := pr.Predict(g, tasks, round, State{})
	if err != nil {
		t.Fatal(err)
	}
	return preds
}

// chain is a Predictor called round after round with the State the previous call returned,
// measured against every node of that call, as the simulator calls it.
type chain struct {
	pr *Predictor
	st State
}

func newChain(t *testing.T, p Params) *chain {
	t.Helper()
	pr, err := NewPredictor(p)
	if err != nil {
		t.Fatal(err)
	}
	return &chain{pr: pr}
}

func (c *chain) call(t *testing.T, g *graph.Graph, tasks []stats.Task, round int64) []Prediction {
	t.Helper()
	preds, next, err := c.pr.Predict(g, tasks, round, c.st)
	if err != nil {
		t.Fatal(err)
	}
	next.Baseline = Baselines(g, tasks, preds, nil)
	c.st = next
	return preds
}

func clonePreds(p []Prediction) []Prediction { return append([]Prediction(nil), p...) }
