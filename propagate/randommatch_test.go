package propagate

import (
	"fmt"
	"math"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

// randomGroups are n groups of 8 of random slots of tasks never tried, predicted at ½ with
// the prior's count, of which deg came back all-equal (the others 4 of 8).
func randomGroups(n, deg int) []group {
	var out []group
	for i := range n {
		k := int64(4)
		if i < deg {
			k = 0
		}
		out = append(out, group{b: Baseline{Env: "e", Task: fmt.Sprint(i), Pred: 0.5, Count: 2, Random: true}, k: k, n: 8})
	}
	return out
}

// TestRandomFactorMatchesItsWindow (Params.RandomMatch): the factor is the one under which
// the random slots of its window, as answered, are predicted all-equal as often as they came
// back; it waits for minFactorGroups groups, keeps the last randomWindow, is not measured
// when off, and groups of other picks do not enter it.
func TestRandomFactorMatchesItsWindow(t *testing.T) {
	p := DefaultParams()
	var d drift
	d.start(State{}, p)
	d.measureDispersion(randomGroups(5, 1))
	if d.disp.RandomFactor != 0 || len(d.disp.RandomWindow) != 5 {
		t.Fatalf("5 groups: factor %v, window %d: want none, 5 waiting", d.disp.RandomFactor, len(d.disp.RandomWindow))
	}
	d.measureDispersion(randomGroups(5, 1))
	f := d.disp.RandomFactor
	if !(f > 1) {
		t.Fatalf("10 groups, 2 all-equal, answered ½: factor %v, want above 1 (less spread)", f)
	}
	var pred float64
	for _, g := range d.disp.RandomWindow {
		c := g.Count * f
		pred += BetaBinomialDegenerate(g.Mean*c, (1-g.Mean)*c, int(g.N))
	}
	if pred /= float64(len(d.disp.RandomWindow)); math.Abs(pred-0.2) > 1e-6 {
		t.Errorf("the window under the factor predicts %.6f all-equal, 0.2 came back", pred)
	}
	for range 10 {
		d.measureDispersion(randomGroups(5, 4))
	}
	if len(d.disp.RandomWindow) != randomWindow {
		t.Errorf("window of %d groups, want the last %d", len(d.disp.RandomWindow), randomWindow)
	}
	if !(d.disp.RandomFactor < f) {
		t.Errorf("after groups mostly all-equal the factor is %v, was %v: want lower", d.disp.RandomFactor, f)
	}
	// other picks' groups do not enter it
	other := randomGroups(10, 0)
	for i := range other {
		other[i].b.Random = false
	}
	graded := randomGroups(10, 0)
	for i := range graded {
		graded[i].graded = true
	}
	var e drift
	e.start(State{}, p)
	e.measureDispersion(append(other, graded...))
	if e.disp.RandomFactor != 0 || len(e.disp.RandomWindow) != 0 {
		t.Errorf("selection's picks and graded environments' random slots measured a factor %v (%d groups)", e.disp.RandomFactor, len(e.disp.RandomWindow))
	}
	off := p
	off.RandomMatch = false
	var o drift
	o.start(State{Dispersion: d.disp}, off)
	o.measureDispersion(randomGroups(10, 2))
	if o.disp.RandomFactor != 0 || o.disp.RandomWindow != nil {
		t.Errorf("RandomMatch off: factor %v, window %d kept", o.disp.RandomFactor, len(o.disp.RandomWindow))
	}
}

// TestRandomFactorMovesRandomSlotsAnswersOnly: the factor multiplies the count of a random
// slot's answer, its mean kept; a pick selection made (tried or not), a random slot of an
// environment with graded rewards and the predictions selection reads are as without it.
func TestRandomFactorMovesRandomSlotsAnswersOnly(t *testing.T) {
	p := DefaultParams()
	pr, err := NewPredictor(p)
	if err != nil {
		t.Fatal(err)
	}
	nodes := []graph.Node{{Env: 0, Task: "a"}, {Env: 0, Task: "b"}, {Env: 0, Task: "c"}}
	g := graph.New([]string{"e"}, nodes, make([][]graph.Edge, len(nodes)))
	tasks := make([]stats.Task, len(nodes))
	first, base, err := pr.Predict(g, tasks, 1, State{})
	if err != nil {
		t.Fatal(err)
	}
	base.Baseline = Baselines(g, tasks, first, nil)
	tasks = make([]stats.Task, len(nodes)) // Baselines kept its own copy of what it needs
	var grp stats.Group
	for i := range 8 {
		tasks[0].Add(float64(i%2), 1, 1, true, &grp, stats.DefaultDecay)
	}
	preds, st, err := pr.Predict(g, tasks, 2, base)
	if err != nil {
		t.Fatal(err)
	}
	preds = clonePreds(preds)
	withF := st
	withF.Dispersion = st.Dispersion.clone()
	withF.Dispersion.RandomFactor = 2
	predsF, _, err := pr.Predict(g, tasks, 2, base)
	if err != nil {
		t.Fatal(err)
	}
	for i := range preds {
		if preds[i] != predsF[i] {
			t.Fatalf("node %d: predictions differ between two calls on the same state", i)
		}
	}
	for _, c := range []struct {
		name  string
		p     Prediction
		tried bool
	}{{"untried", preds[1], false}, {"tried", preds[0], true}} {
		got, want := pr.Pick(withF, c.p, c.tried, true), pr.Pick(st, c.p, c.tried, true)
		if !(got.PDeg < want.PDeg) || math.Abs(got.Mean-want.Mean) > 1e-12 || math.Abs(got.Count()-2*want.Count()) > 1e-9 {
			t.Errorf("%s random slot with factor 2: PDeg %.4f mean %.4f count %.4f, without %.4f %.4f %.4f: want the count doubled, the mean kept",
				c.name, got.PDeg, got.Mean, got.Count(), want.PDeg, want.Mean, want.Count())
		}
		if a, b := pr.Pick(withF, c.p, c.tried, false), pr.Pick(st, c.p, c.tried, false); a != b {
			t.Errorf("%s pick of selection: %+v with the factor, %+v without", c.name, a, b)
		}
	}
	graded := preds[1]
	graded.graded = true
	if a, b := pr.Pick(withF, graded, false, true), pr.Pick(st, graded, false, true); a != b {
		t.Errorf("random slot of a graded environment: %+v with the factor, %+v without", a, b)
	}
	off := p
	off.RandomMatch = false
	prOff, _ := NewPredictor(off)
	if a, b := prOff.Pick(withF, preds[1], false, true), prOff.Pick(st, preds[1], false, true); a != b {
		t.Errorf("RandomMatch off: the stored factor moved the answer")
	}
}
