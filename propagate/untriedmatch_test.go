package propagate

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

// untriedCurseWorld is one environment of 0/1 tasks in pairs (a, b) joined by an edge. An a
// task succeeds with chance 0.03 or 0.97 (35% each) or 0.5; its b task is alike when a is
// always or never solved, and always or never solved, either way, when a is a coin: over the
// environment the edge says much, of the b tasks whose partner looks informative it says
// nothing. Each round rolls out the next 16 a tasks, in order (as random slots are: whatever
// their prediction), and the 16 untried b tasks whose partner was rolled out and whose
// prediction has the highest within-group variance, as selection would: those borrow the
// look of an informative partner and come back all-equal more often than the environment's
// correction, fitted on all its groups, predicts for them.
type untriedCurseWorld struct {
	g     *graph.Graph
	tasks []stats.Task
	p     []float64
	rng   *rand.Rand
	next  int // a tasks rolled out so far
	pairs int
	picks int // b tasks picked a round
}

func newUntriedCurseWorld() *untriedCurseWorld {
	const pairs = 600
	w := &untriedCurseWorld{rng: rand.New(rand.NewPCG(7, 11)), pairs: pairs, picks: 16}
	nodes := make([]graph.Node, 2*pairs)
	adj := make([][]graph.Edge, 2*pairs)
	for i := range pairs { // a_i is node 2i, b_i node 2i+1: sorted by task name
		nodes[2*i] = graph.Node{Env: 0, Task: fmt.Sprintf("t%04da", i)}
		nodes[2*i+1] = graph.Node{Env: 0, Task: fmt.Sprintf("t%04db", i)}
		adj[2*i] = []graph.Edge{{To: int32(2*i + 1), Weight: 1, Sim: 1}}
		adj[2*i+1] = []graph.Edge{{To: int32(2 * i), Weight: 1, Sim: 1}}
	}
	extreme := func() float64 { return []float64{0.03, 0.97}[w.rng.IntN(2)] }
	for range pairs {
		a := 0.5
		if w.rng.Float64() < 0.7 {
			a = extreme()
		}
		b := a
		if a == 0.5 {
			b = extreme()
		}
		w.p = append(w.p, a, b)
	}
	w.g = graph.New([]string{"pairs"}, nodes, adj)
	w.tasks = make([]stats.Task, 2*pairs)
	return w
}

// round rolls out this round's groups and returns the b tasks selection picked; random says
// which nodes were drawn whatever their prediction (the a tasks).
func (w *untriedCurseWorld) round(round int64, preds []Prediction) (picked []int, random map[int]bool) {
	var cands []int
	for i := range w.next {
		if b := 2*i + 1; w.tasks[b].Rollouts == 0 {
			cands = append(cands, b)
		}
	}
	slices.SortStableFunc(cands, func(x, y int) int { return cmp.Compare(preds[y].Var, preds[x].Var) })
	picked = cands[:min(w.picks, len(cands))]
	random = map[int]bool{}
	for range 16 {
		if w.next < w.pairs {
			random[2*w.next] = true
			w.group(2*w.next, round)
			w.next++
		}
	}
	for _, i := range picked {
		w.group(i, round)
	}
	return picked, random
}

func (w *untriedCurseWorld) group(i int, round int64) {
	var grp stats.Group
	for range 8 {
		w.tasks[i].Add(bernoulli(w.rng, w.p[i]), round, round, true, &grp, stats.DefaultDecay)
	}
}

// step makes one request of chain c on the world: the predictions, the round's groups and
// the state the next request takes (its baselines those of every node, the a tasks marked as
// random slots). It returns the predictions, the statistics before the round, the b tasks
// picked and the state the predictions were made with (what Pick reads).
func (w *untriedCurseWorld) step(t *testing.T, c *chain, round int64) (preds []Prediction, before []stats.Task, picked []int, st State) {
	t.Helper()
	preds, next, err := c.pr.Predict(w.g, w.tasks, round, c.st)
	if err != nil {
		t.Fatal(err)
	}
	preds = clonePreds(preds)
	before = append([]stats.Task(nil), w.tasks...)
	picked, random := w.round(round, preds)
	next.Baseline = Baselines(w.g, before, preds, nil)
	for j := range next.Baseline {
		next.Baseline[j].Random = random[j]
	}
	c.st = next
	return preds, before, picked, next
}

// untriedCurseGap runs the world for 30 rounds and returns the mean predicted chance of a
// degenerate group of selection's untried picks in rounds 11-30, as Pick answers them, minus
// the share of them that came back degenerate; and the factor stored at the end.
func untriedCurseGap(t *testing.T, p Params) (gap, factor float64) {
	w := newUntriedCurseWorld()
	c := newChain(t, p)
	var pred, real, n float64
	for round := int64(1); round <= 30; round++ {
		preds, before, picked, st := w.step(t, c, round)
		if round <= 10 {
			continue
		}
		for _, i := range picked {
			pred += c.pr.Pick(st, preds[i], false, false).PDeg
			if s := w.tasks[i].Sum - before[i].Sum; s == 0 || s == 8 {
				real++
			}
			n++
		}
	}
	return (pred - real) / n, c.st.Dispersion.NewFactor
}

// TestNeverTriedFactorCorrectsTheWinnersCurse: selection's untried picks, chosen by
// predictions their environment's correction made right on average, come back all-equal
// more often than predicted; the never-tried factor closes the gap (Params.NewMatch).
func TestNeverTriedFactorCorrectsTheWinnersCurse(t *testing.T) {
	on, off := DefaultParams(), DefaultParams()
	off.NewMatch = false
	gOn, fOn := untriedCurseGap(t, on)
	gOff, fOff := untriedCurseGap(t, off)
	t.Logf("predicted − realised degenerate share of the untried picks: matched %.3f (factor %.3f), not %.3f (factor %v)", gOn, fOn, gOff, fOff)
	if fOff != 0 {
		t.Errorf("with NewMatch off a factor %v was stored", fOff)
	}
	if math.Abs(gOff) < 0.04 {
		t.Fatalf("without the factor the gap is %.3f: the world does not show the curse it tests", gOff)
	}
	if math.Abs(gOn) > math.Abs(gOff)/2 {
		t.Errorf("with the factor the gap is %.3f, without %.3f: want less than half", gOn, gOff)
	}
}

// TestNeverTriedFactorLeavesOtherPicksAlone: the factor changes only the answer for an
// untried task that selection picked in a 0/1 environment: a random slot, a task tried
// before and a task of an environment with graded rewards are answered as without it, and
// nothing but that answer changes (the predictions selection reads are the same).
func TestNeverTriedFactorLeavesOtherPicksAlone(t *testing.T) {
	p := DefaultParams()
	pr, err := NewPredictor(p)
	if err != nil {
		t.Fatal(err)
	}
	w := newUntriedCurseWorld()
	w.group(0, 1) // a tried task
	w.group(2, 1)
	preds, st, err := pr.Predict(w.g, w.tasks, 2, State{})
	if err != nil {
		t.Fatal(err)
	}
	preds = clonePreds(preds)
	withF := st
	withF.Dispersion = st.Dispersion.clone()
	withF.Dispersion.NewFactor = 0.25
	untried := preds[5]
	if got, want := pr.Pick(withF, untried, false, false), pr.Pick(st, untried, false, false); !(got.PDeg > want.PDeg) || got.Mean != want.Mean {
		t.Errorf("untried pick with factor ¼: PDeg %v mean %v, without %v mean %v: want a higher chance, the same mean", got.PDeg, got.Mean, want.PDeg, want.Mean)
	}
	otherPicksAlike(t, pr, withF, st, untried, preds[0], "the factor")
	off := p
	off.NewMatch = false
	off.StartDegenerate = 0 // nothing is measured in st: the answer's start would move it
	prOff, _ := NewPredictor(off)
	if got := prOff.Pick(withF, untried, false, false); got != untried {
		t.Errorf("NewMatch off: an untried pick answered %+v, want it as predicted %+v", got, untried)
	}
}

// TestNeverTriedFactorSkipsGradedEnvironments: groups of untried tasks of an environment
// where some task's rewards are graded do not measure the factor.
func TestNeverTriedFactorSkipsGradedEnvironments(t *testing.T) {
	run := func(graded bool) float64 {
		w := newUntriedCurseWorld()
		if graded { // one task of the environment scores 0.5 once
			var grp stats.Group
			w.tasks[len(w.tasks)-1].Add(0.5, 1, 1, true, &grp, stats.DefaultDecay)
		}
		c := newChain(t, DefaultParams())
		for round := int64(1); round <= 12; round++ {
			w.step(t, c, round)
		}
		return c.st.Dispersion.NewFactor
	}
	if f := run(false); f == 0 {
		t.Fatalf("0/1 environment: no factor measured")
	}
	if f := run(true); f != 0 {
		t.Errorf("graded environment: factor %v measured, want none", f)
	}
}

// TestNeverTriedFactorFromFewPicksARequest: with 3 untried picks a request, fewer than a
// factor needs, the groups are kept in the state until enough have come back, and the factor
// is measured from them; at most minFactorGroups−1 wait at any time.
func TestNeverTriedFactorFromFewPicksARequest(t *testing.T) {
	w := newUntriedCurseWorld()
	w.picks = 3
	c := newChain(t, DefaultParams())
	measured := 0
	for round := int64(1); round <= 20; round++ {
		prev := c.st.Dispersion.NewFactor
		_, _, _, next := w.step(t, c, round)
		if n := len(next.Dispersion.NewPending); n >= minFactorGroups {
			t.Fatalf("round %d: %d groups pending, want fewer than %d", round, n, minFactorGroups)
		}
		if next.Dispersion.NewFactor != prev {
			measured++
		}
		c.st = roundTrip(t, c.st)
	}
	if measured < 4 || c.st.Dispersion.NewFactor == 0 {
		t.Errorf("3 picks a request for 20 requests: the factor moved %d times, now %v; want it measured every 3 requests or so",
			measured, c.st.Dispersion.NewFactor)
	}
}

// roundTrip is st after its dispersion's binary form, as a scheduler reads it back.
func roundTrip(t *testing.T, st State) State {
	t.Helper()
	b, err := st.Dispersion.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var d Dispersion
	if err := d.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	st.Dispersion = d
	return st
}

// TestNeverTriedFactorStored: the factor survives the binary form (version 4, the stuck map
// with or without), and a Dispersion without it keeps the bytes of the build before.
func TestNeverTriedFactorStored(t *testing.T) {
	base := Dispersion{Global: &Likelihood{LL: []float64{-1, -2}, N: 3}, RechosenFactor: 0.5}
	before, err := base.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if before[0] != dispersionVersion {
		t.Fatalf("without a never-tried factor written as version %d, want %d", before[0], dispersionVersion)
	}
	for _, stuck := range []*Trend{nil, {N: 2, Beta: [4]float64{1, 2, 3, 4}}} {
		d := base
		d.NewFactor, d.Stuck = 0.3, stuck
		d.NewPending = []MatchGroup{{Mean: 0.4, Count: 3.5, N: 8, K: 0}, {Mean: 0.9, Count: 12, N: 4, K: 3}}
		d.LowFactor, d.LowPending = 0.7, []MatchGroup{{Mean: 0.05, Count: 20, N: 8, K: 0}}
		b, err := d.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var back Dispersion
		if err := back.UnmarshalBinary(b); err != nil {
			t.Fatalf("stuck %v: %v", stuck != nil, err)
		}
		if back.NewFactor != 0.3 || (back.Stuck == nil) != (stuck == nil) || !slices.Equal(back.NewPending, d.NewPending) ||
			back.LowFactor != 0.7 || !slices.Equal(back.LowPending, d.LowPending) {
			t.Errorf("stuck %v: decoded %+v", stuck != nil, back)
		}
		again, _ := back.MarshalBinary()
		if !bytes.Equal(again, b) {
			t.Errorf("stuck %v: re-encoded bytes differ", stuck != nil)
		}
	}
}

// otherPicksAlike fails t unless pr answers a random slot of the untried prediction, the tried
// one and the untried one in a graded environment the same under with as under st: a correction
// of selection's picks of tasks never tried (what) moves none of the others.
func otherPicksAlike(t *testing.T, pr *Predictor, with, st State, untried, tried Prediction, what string) {
	t.Helper()
	for _, c := range []struct {
		name          string
		p             Prediction
		tried, random bool
	}{
		{"random slot", untried, false, true},
		{"tried", tried, true, false},
		{"graded environment", func() Prediction { q := untried; q.graded = true; return q }(), false, false},
	} {
		if got, want := pr.Pick(with, c.p, c.tried, c.random), pr.Pick(st, c.p, c.tried, c.random); got != want {
			t.Errorf("%s: answered %+v with %s, %+v without", c.name, got, what, want)
		}
	}
}
