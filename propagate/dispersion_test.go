package propagate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

// dispersionWorld is two environments of 300 tasks: in "split" every task is nearly always
// or nearly never solved (half each), in "even" every task succeeds half the time. Each
// round 10 untried tasks of each are rolled out once (8 rollouts), and 10 tried tasks again
// with a success chance moved by a random ±jump (a task trained on changes).
type dispersionWorld struct {
	g     *graph.Graph
	tasks []stats.Task
	p     []float64
	rng   *rand.Rand
	next  [2]int
}

func newDispersionWorld() *dispersionWorld {
	const n = 300
	var nodes []graph.Node
	w := &dispersionWorld{rng: rand.New(rand.NewPCG(9, 9))}
	for e := range 2 {
		for i := range n {
			nodes = append(nodes, graph.Node{Env: int32(e), Task: fmt.Sprintf("t%03d", i)})
			p := 0.5
			if e == 0 {
				p = []float64{0.02, 0.98}[i%2]
			}
			w.p = append(w.p, p)
		}
	}
	w.g = graph.New([]string{"split", "even"}, nodes, nil)
	w.tasks = make([]stats.Task, len(nodes))
	return w
}

// round rolls out this round's groups; jump moves tried tasks' chances (logit scale).
func (w *dispersionWorld) round(round int64, jump float64) {
	for e := range 2 {
		for range 10 { // untried
			i := e*300 + w.next[e]
			w.next[e]++
			w.group(i, w.p[i], round)
		}
		for k := range 10 { // tried again, each with its chance moved
			i := e*300 + (int(round)*7+k)%w.next[e]
			q := sigmoid(logit(min(max(w.p[i], 0.03), 0.97)) + jump*(2*float64(w.rng.IntN(2))-1))
			w.group(i, q, round)
		}
	}
}

func (w *dispersionWorld) group(i int, p float64, round int64) {
	var grp stats.Group
	for range 8 {
		w.tasks[i].Add(bernoulli(w.rng, p), round, round, true, &grp, stats.DefaultDecay)
	}
}

// untriedPDeg is the mean predicted chance of a degenerate group of the untried tasks of
// environment e.
func (w *dispersionWorld) untriedPDeg(preds []Prediction, e int) float64 {
	var s float64
	var n int
	for i := e * 300; i < (e+1)*300; i++ {
		if w.tasks[i].Rollouts == 0 {
			s += preds[i].PDeg
			n++
		}
	}
	return s / float64(n)
}

func runDispersion(t *testing.T, p Params, jump float64) (*dispersionWorld, []Prediction, State) {
	t.Helper()
	w := newDispersionWorld()
	c := newChain(t, p)
	var preds []Prediction
	for round := int64(1); round <= 15; round++ {
		preds = c.call(t, w.g, w.tasks, round)
		w.round(round, jump)
	}
	preds = c.call(t, w.g, w.tasks, 16)
	return w, preds, c.st
}

// TestDispersionFitsEachEnvironment: the untried tasks of an environment whose tasks are
// nearly always or nearly never solved come back degenerate ~85% of the time; with the
// correction their predicted chance follows (each environment its own), without it stays
// near the fixed prior's 0.2.
func TestDispersionFitsEachEnvironment(t *testing.T) {
	on, off := DefaultParams(), DefaultParams()
	off.DispersionMemory = 0
	w, preds, st := runDispersion(t, on, 0)
	_, predsOff, stOff := runDispersion(t, off, 0)
	realSplit := math.Pow(0.98, 8) + math.Pow(0.02, 8) // ≈ 0.85, the true chance for a task of 0.02 or 0.98
	if got := w.untriedPDeg(preds, 0); math.Abs(got-realSplit) > 0.1 {
		t.Errorf("split environment: untried predicted %.3f degenerate, truth %.3f", got, realSplit)
	}
	realEven := 2 * math.Pow(0.5, 8)
	if got := w.untriedPDeg(preds, 1); math.Abs(got-realEven) > 0.08 {
		t.Errorf("even environment: untried predicted %.3f degenerate, truth %.3f", got, realEven)
	}
	if got := w.untriedPDeg(predsOff, 0); got > 0.35 {
		t.Errorf("without the correction: split predicted %.3f; the test needs it far from the truth", got)
	}
	if st.Dispersion.Env["split"] == nil || stOff.Dispersion.Env != nil {
		t.Errorf("dispersion state with the correction %+v, without %+v", st.Dispersion, stOff.Dispersion)
	}
}

// TestDispersionShrinksAnEnvironmentWithFewGroups: an environment with one group measured
// takes (nearly) the global scale, not the one its single group would give.
func TestDispersionShrinksAnEnvironmentWithFewGroups(t *testing.T) {
	glob := newLikelihood()
	for range 200 {
		glob.add(0, 8, 0.5, 2, 0) // every group degenerate: a small scale
	}
	one := newLikelihood()
	one.add(4, 8, 0.5, 2, 0) // one group half solved: alone, the largest scale
	if s := correctionOf(one, nil, 0).scale; s != scaleGrid[len(scaleGrid)-1] {
		t.Fatalf("one even group alone chooses scale %v", s)
	}
	if s, g := correctionOf(one, glob, 16).scale, correctionOf(glob, nil, 0).scale; s > 2*g {
		t.Errorf("shrunk towards the global scale %v, one group gives %v", g, s)
	}
	if k := correctionOf(nil, nil, 16); k != (correction{1, 1}) {
		t.Errorf("nothing measured: %+v, want scale 1 and slope 1", k)
	}
}

// TestDispersionCorrectsRechosenOverconfidence: tried tasks whose chance jumps between
// groups (trained on) come back degenerate less or more often than their own evidence says;
// the re-chosen scale measures it: below 1 when they jump, and below the one when they stand.
func TestDispersionCorrectsRechosenOverconfidence(t *testing.T) {
	p := DefaultParams()
	_, _, still := runDispersion(t, p, 0)
	_, _, jumps := runDispersion(t, p, 2.5)
	sStill, sJump := correctionOf(still.Dispersion.Rechose, nil, 0).scale, correctionOf(jumps.Dispersion.Rechose, nil, 0).scale
	if !(sJump < 1) || !(sJump < sStill) {
		t.Errorf("re-chosen scale %v when tried tasks jump, %v when they stand: want below 1 and below", sJump, sStill)
	}
}

// TestDispersionStateIsAValue: a call does not write into the State it was given, and a
// state stored by another version (wrong grid length, NaN) is dropped.
func TestDispersionStateIsAValue(t *testing.T) {
	w := newDispersionWorld()
	c := newChain(t, DefaultParams())
	c.call(t, w.g, w.tasks, 1)
	w.round(1, 0)
	c.call(t, w.g, w.tasks, 2)
	w.round(2, 0)
	given := c.st
	before := *given.Dispersion.Global
	before.LL = append([]float64(nil), before.LL...)
	c.call(t, w.g, w.tasks, 3)
	if given.Dispersion.Global.N != before.N || given.Dispersion.Global.LL[0] != before.LL[0] {
		t.Error("the call changed the Dispersion of the State it was given")
	}
	bad := Dispersion{Global: &Likelihood{LL: []float64{1, 2}, N: 3}, Rechose: &Likelihood{LL: make([]float64, len(dispersionGrid)), N: math.NaN()}}
	if c := bad.clone(); c.Global != nil || c.Rechose != nil {
		t.Errorf("malformed likelihoods kept: %+v", c)
	}
}

func TestExplorationReturn(t *testing.T) {
	cases := []struct {
		name    string
		new, re *Signal
		want    float64
	}{
		{"nothing measured", nil, nil, 1},
		{"too few groups", &Signal{Sum: 3, N: 31}, &Signal{Sum: 30, N: 40}, 1},
		{"untried return half", &Signal{Sum: 20, N: 40}, &Signal{Sum: 40, N: 40}, 0.5},
		{"untried return more", &Signal{Sum: 60, N: 40}, &Signal{Sum: 20, N: 40}, 2},
		{"known tasks return nothing", &Signal{Sum: 6, N: 40}, &Signal{Sum: 0, N: 40}, 1},
	}
	for _, c := range cases {
		st := State{Dispersion: Dispersion{NewSignal: c.new, ReSignal: c.re}}
		if got := st.ExplorationReturn(); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestExplorationReturnIsMeasured: the state's exploration return is the ratio of the
// signal the groups of untried and of tried tasks returned: when tried tasks jump to
// extremes (trained on), known tasks teach less and exploring returns more.
func TestExplorationReturnIsMeasured(t *testing.T) {
	var got [2]float64
	for i, jump := range []float64{0, 2.5} {
		_, _, st := runDispersion(t, DefaultParams(), jump)
		n, r := st.Dispersion.NewSignal, st.Dispersion.ReSignal
		if n == nil || r == nil || n.N < minSignalGroups || r.N < minSignalGroups {
			t.Fatalf("jump %v: signals %+v %+v", jump, n, r)
		}
		got[i] = st.ExplorationReturn()
		if want := n.mean() / r.mean(); got[i] != want || got[i] == 1 {
			t.Errorf("jump %v: exploration return %v, the groups' %v", jump, got[i], want)
		}
	}
	if !(got[1] > got[0]+0.2) {
		t.Errorf("exploration return %v with tried tasks standing, %v with them jumping: want more", got[0], got[1])
	}
}

func TestRandomReturn(t *testing.T) {
	cases := []struct {
		name      string
		new, rand *Signal
		want      float64
	}{
		{"nothing measured", nil, nil, 1},
		{"no random slot measured", &Signal{Sum: 20, N: 40}, nil, 1},
		{"too few random groups", &Signal{Sum: 20, N: 80}, &Signal{Sum: 0, N: 31}, 1},
		{"too few chosen groups", &Signal{Sum: 20, N: 70}, &Signal{Sum: 10, N: 40}, 1},
		// chosen untried groups: 50 − 10 = 40 signal over 80 − 40 = 40 groups; random: 10 over 40
		{"random slots return a quarter", &Signal{Sum: 50, N: 80}, &Signal{Sum: 10, N: 40}, 0.25},
		{"random slots return more: the configured share stays", &Signal{Sum: 50, N: 80}, &Signal{Sum: 40, N: 40}, 1},
		{"chosen groups return nothing", &Signal{Sum: 10, N: 80}, &Signal{Sum: 10, N: 40}, 1},
	}
	for _, c := range cases {
		st := State{Dispersion: Dispersion{NewSignal: c.new, ReSignal: &Signal{Sum: 30, N: 40}, RandSignal: c.rand}}
		if got := st.RandomReturn(); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRandomReturnIsMeasured: the groups of untried tasks whose baselines are marked random
// measure what random slots return, against the other untried groups. In the dispersion
// world the "split" environment's groups are nearly all degenerate and the "even" one's
// informative: marked in "split", random slots return far less than the rest; marked in
// "even", more; unmarked, nothing is measured. Tried tasks' groups never count: their
// random marks measure nothing.
func TestRandomReturnIsMeasured(t *testing.T) {
	for _, c := range []struct {
		name string
		env  int32 // the environment whose baselines are marked random, -1 none
		ok   func(float64) bool
	}{
		{"split marked", 0, func(r float64) bool { return r < 0.3 }},
		{"even marked", 1, func(r float64) bool { return r == 1 }}, // more, capped
		{"none marked", -1, func(r float64) bool { return r == 1 }},
	} {
		w := newDispersionWorld()
		ch := newChain(t, DefaultParams())
		for round := int64(1); round <= 16; round++ {
			ch.call(t, w.g, w.tasks, round)
			for i := range ch.st.Baseline {
				ch.st.Baseline[i].Random = w.g.Nodes[i].Env == c.env
			}
			if round < 16 {
				w.round(round, 0)
			}
		}
		rs := ch.st.Dispersion.RandSignal
		if c.env >= 0 && (rs == nil || rs.N < minSignalGroups) {
			t.Fatalf("%s: random signal %+v, want at least %d groups", c.name, rs, minSignalGroups)
		}
		// each round rolls out 10 untried tasks of each environment (and 10 tried, which
		// must not count): the random groups are exactly half of the untried ones
		if n := ch.st.Dispersion.NewSignal; c.env >= 0 && math.Abs(rs.N-n.N/2) > 1e-9 {
			t.Errorf("%s: %v random groups of %v untried ones, want half", c.name, rs.N, n.N)
		}
		if n := ch.st.Dispersion.NewSignal; c.env == 1 && !(rs.mean() > 1.5*(n.Sum-rs.Sum)/(n.N-rs.N)) {
			t.Errorf("%s: random slots' signal %v against the other untried groups' %v: want far more, so that the cap shows",
				c.name, rs.mean(), (n.Sum-rs.Sum)/(n.N-rs.N))
		}
		if c.env < 0 && rs != nil && rs.N != 0 {
			t.Errorf("%s: random signal %+v measured from no random slot", c.name, rs)
		}
		if got := ch.st.RandomReturn(); !c.ok(got) {
			t.Errorf("%s: random return %v", c.name, got)
		}
	}
}
