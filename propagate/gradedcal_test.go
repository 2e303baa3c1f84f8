package propagate

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

// toolWorld is one environment of 400 tasks graded like a tool call: 0 for the wrong tool,
// 0.5 for the right tool with wrong arguments, 1 for both right. The chance of the right tool
// and of right arguments are the task's own and do not move; a task whose arguments are
// hard returns groups of all 0.5, which its mean reads as a coin.
type toolWorld struct {
	g      *graph.Graph
	tasks  []stats.Task
	tool   []float64
	args   []float64
	rng    *rand.Rand
	groups []stats.Group
}

func newToolWorld() *toolWorld {
	const n = 400
	w := &toolWorld{tasks: make([]stats.Task, n), tool: make([]float64, n), args: make([]float64, n),
		rng: rand.New(rand.NewPCG(11, 17))}
	nodes := make([]graph.Node, n)
	for i := range n {
		nodes[i] = graph.Node{Env: 0, Task: fmt.Sprintf("t%03d", i)}
		w.tool[i] = sigmoid(2 + 1.5*w.rng.NormFloat64())
		w.args[i] = sigmoid(-1 + 3*w.rng.NormFloat64())
	}
	w.g = graph.New([]string{"e"}, nodes, nil)
	return w
}

// group rolls out one group of 4 of node i in round and reports whether it was all-equal.
func (w *toolWorld) group(i int, round int64) bool {
	var grp stats.Group
	lo, hi := 2.0, -1.0
	for range 4 {
		r := 0.0
		if w.rng.Float64() < w.tool[i] {
			r = 0.5
			if w.rng.Float64() < w.args[i] {
				r = 1
			}
		}
		lo, hi = min(lo, r), max(hi, r)
		w.tasks[i].Add(r, round, round, true, &grp, stats.DefaultDecay)
	}
	return lo == hi
}

// gradedCalibration plays the world for 60 rounds at group size 4: each round 12 tasks never
// tried and 12 re-tries of tried tasks, in turn (whatever their predictions, so that nothing
// but the predictions is measured), the answer of each pick stored in its baseline as the
// scheduler stores it. It returns, over rounds 11 on, per channel (never tried, re-chosen), the
// mean chance of an all-equal group the answers gave and the share that came back all-equal.
func gradedCalibration(t *testing.T, p Params) (pred, real [2]float64, n [2]int) {
	t.Helper()
	w := newToolWorld()
	p.GroupSize = 4
	pr, err := NewPredictor(p)
	if err != nil {
		t.Fatal(err)
	}
	var st State
	nextNew, nextOld := 0, 0
	for round := int64(1); round <= 60; round++ {
		preds, next, err := pr.Predict(w.g, w.tasks, round, st)
		if err != nil {
			t.Fatal(err)
		}
		var chosen []int
		for len(chosen) < 12 && nextNew < len(w.tasks) {
			chosen = append(chosen, nextNew)
			nextNew++
		}
		for k := 0; k < 12 && nextNew > 0; k++ {
			chosen = append(chosen, nextOld%nextNew)
			nextOld++
		}
		next.Baseline = Baselines(w.g, w.tasks, preds, chosen)
		answer := pr.Picker(next)
		var d [][2]float64
		for k, i := range chosen {
			tried := w.tasks[i].Rollouts > 0
			a := answer(preds[i], tried, false)
			next.Baseline[k].Graded = a.GradedBase(4)
			d = append(d, [2]float64{a.PDegenerate(4), float64(b2i(tried))})
		}
		st = next
		for k, i := range chosen {
			deg := w.group(i, round)
			if round >= 11 {
				c := int(d[k][1])
				pred[c] += d[k][0]
				if deg {
					real[c]++
				}
				n[c]++
			}
		}
	}
	for c := range pred {
		pred[c] /= float64(n[c])
		real[c] /= float64(n[c])
	}
	return pred, real, n
}

// TestGradedPicksAreCalibrated (Params.GradedCal): in a world of tool calls graded 0, 0.5 and
// 1, the picks of each channel are answered within 0.05 of the share of their groups that
// comes back all-equal with the graded calibration; without it the answers are further off.
func TestGradedPicksAreCalibrated(t *testing.T) {
	on := DefaultParams()
	off := on
	off.GradedCal = false
	pOn, rOn, n := gradedCalibration(t, on)
	pOff, rOff, _ := gradedCalibration(t, off)
	for c, name := range []string{"never tried", "re-chosen"} {
		t.Logf("%s (%d picks): with the calibration predicted %.3f, realised %.3f; without %.3f, %.3f",
			name, n[c], pOn[c], rOn[c], pOff[c], rOff[c])
		if n[c] < 300 {
			t.Fatalf("%s: only %d picks measured", name, n[c])
		}
		if math.Abs(pOn[c]-rOn[c]) > 0.05 {
			t.Errorf("%s with the calibration: predicted %.3f, realised %.3f: want within 0.05", name, pOn[c], rOn[c])
		}
	}
	if math.Abs(pOff[0]-rOff[0]) <= 0.05 && math.Abs(pOff[1]-rOff[1]) <= 0.05 {
		t.Errorf("without the calibration every channel is within 0.05 (%.3f/%.3f, %.3f/%.3f): the world does not test it",
			pOff[0], rOff[0], pOff[1], rOff[1])
	}
}

// TestGradedCalibrationLeavesBinaryTasks: in an environment whose rewards are all 0 or 1 no
// baseline is graded, nothing is measured, and every pick is answered as without it.
func TestGradedCalibrationLeavesBinaryTasks(t *testing.T) {
	w := newStuckWorld()
	for i := range w.tasks {
		w.group(i, 1)
	}
	on := DefaultParams()
	off := on
	off.GradedCal = false
	var states [2]State
	var answers [2][]Prediction
	for k, p := range []Params{on, off} {
		pr, err := NewPredictor(p)
		if err != nil {
			t.Fatal(err)
		}
		preds, next, err := pr.Predict(w.g, w.tasks, 2, State{})
		if err != nil {
			t.Fatal(err)
		}
		if b := preds[0].GradedBase(8); b != 0 {
			t.Fatalf("a task of 0/1 rewards has a graded base %v", b)
		}
		next.Baseline = Baselines(w.g, w.tasks, preds, nil)
		_, next, err = pr.Predict(w.g, w.tasks, 3, next)
		if err != nil {
			t.Fatal(err)
		}
		states[k] = next
		pick := pr.Picker(next)
		for i := range preds {
			answers[k] = append(answers[k], pick(preds[i], true, i%3 == 0))
		}
	}
	if states[0].Dispersion.Graded != nil {
		t.Errorf("graded maps measured on 0/1 rewards: %+v", *states[0].Dispersion.Graded)
	}
	a, _ := states[0].Dispersion.MarshalBinary()
	b, _ := states[1].Dispersion.MarshalBinary()
	if !bytes.Equal(a, b) {
		t.Errorf("the stored dispersion differs with the graded calibration on")
	}
	for i := range answers[0] {
		if answers[0][i] != answers[1][i] {
			t.Fatalf("pick %d answered %+v with the calibration, %+v without", i, answers[0][i], answers[1][i])
		}
	}
}

// TestGradedMapsRoundTrip: the maps are stored in the dispersion's binary form (version 4,
// written only when there are some) and read back to the same numbers; a Dispersion without
// them keeps the bytes of before.
func TestGradedMapsRoundTrip(t *testing.T) {
	tr := &Trend{N: 7.25}
	tr.Beta = [trendDim]float64{0.75, -0.125, 0, 0}
	tr.Info[0] = 3
	d := Dispersion{RechosenFactor: 1.5, Graded: &GradedCal{Rechosen: tr}}
	data, err := d.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if data[0] != dispersionVersion5 {
		t.Errorf("version %d, want %d", data[0], dispersionVersion5)
	}
	var back Dispersion
	if err := back.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if back.Graded == nil || back.Graded.Untried != nil || back.Graded.Random != nil || *back.Graded.Rechosen != *tr {
		t.Errorf("read back %+v, want the re-chosen map %+v alone", back.Graded, *tr)
	}
	d.Graded = nil
	data, _ = d.MarshalBinary()
	if data[0] != dispersionVersion {
		t.Errorf("without maps version %d, want %d", data[0], dispersionVersion)
	}
	c := State{Dispersion: Dispersion{Graded: &GradedCal{Untried: tr}}}.Corrections()
	if m := c.GradedMaps["never_tried"]; m == nil || m.Coef != tr.Beta || m.Groups != 7.25 || len(c.GradedMaps) != 1 {
		t.Errorf("corrections show %+v, want the never-tried map", c.GradedMaps)
	}
	if c := (State{}).Corrections(); c.GradedMaps != nil {
		t.Errorf("nothing measured: graded maps %+v", c.GradedMaps)
	}
}
