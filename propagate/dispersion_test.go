package propagate

import (
	"encoding/json"
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
	w, c, preds := runDispersionChain(t, p, jump)
	return w, preds, c.st
}

// runDispersionChain is runDispersion that returns the chain, whose predictor holds what its
// last call used.
func runDispersionChain(t *testing.T, p Params, jump float64) (*dispersionWorld, *chain, []Prediction) {
	t.Helper()
	w := newDispersionWorld()
	c := newChain(t, p)
	for round := int64(1); round <= 15; round++ {
		c.call(t, w.g, w.tasks, round)
		w.round(round, jump)
	}
	return w, c, c.call(t, w.g, w.tasks, 16)
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
	if s := correctionOf(one, nil, 0, true, true).scale; s != scaleGrid[len(scaleGrid)-1] {
		t.Fatalf("one even group alone chooses scale %v", s)
	}
	if s, g := correctionOf(one, glob, 16, true, true).scale, correctionOf(glob, nil, 0, true, true).scale; s > 2*g {
		t.Errorf("shrunk towards the global scale %v, one group gives %v", g, s)
	}
	if k := correctionOf(nil, nil, 16, true, true); k != (unitCorrection) {
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
	sStill, sJump := correctionOf(still.Dispersion.Rechose, nil, 0, true, true).scale, correctionOf(jumps.Dispersion.Rechose, nil, 0, true, true).scale
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

// TestDispersionByMeanFitsCentreAndTails: most groups (80%, as selection picks) are of tasks
// predicted ½, the rest (as random slots) predicted 0.1 or 0.9, all with count 4; the truth
// is a Beta of half that count at ½ and surer far from ½ (count 2·(4m(1−m))^(−1), η = 1).
// One scale fitted on all of them is honest at ½ and predicts too many degenerate groups in
// the tails; with the count depending on the mean (η), the fit finds the truth and both are
// within 0.03.
func TestDispersionByMeanFitsCentreAndTails(t *testing.T) {
	type grp struct {
		k    int64
		mean float64
	}
	rng := rand.New(rand.NewPCG(5, 13))
	var groups []grp
	for i := range 4000 {
		m := 0.5
		if i%5 == 0 {
			m = []float64{0.1, 0.9}[i/5%2]
		}
		c := 2 / (4 * m * (1 - m))
		p := betaDraw(rng, c*m, c*(1-m))
		var k int64
		for range 8 {
			if rng.Float64() < p {
				k++
			}
		}
		groups = append(groups, grp{k, m})
	}
	const count = 4
	l := newLikelihood()
	for _, g := range groups {
		l.add(g.k, 8, g.mean, count, 0)
	}
	// gaps returns |predicted − realised| degenerate share at ½ and in the tails.
	gaps := func(k correction) (centre, tails float64) {
		var pred, real, n [2]float64
		for _, g := range groups {
			c := 0
			if g.mean != 0.5 {
				c = 1
			}
			m, cnt := k.apply(g.mean, count, 0)
			pred[c] += BetaBinomialDegenerate(m*cnt, (1-m)*cnt, 8)
			if g.k == 0 || g.k == 8 {
				real[c]++
			}
			n[c]++
		}
		return math.Abs(pred[0]-real[0]) / n[0], math.Abs(pred[1]-real[1]) / n[1]
	}
	withC, withT := gaps(correctionOf(l, nil, 0, true, true))
	withoutC, withoutT := gaps(correctionOf(l, nil, 0, false, true))
	if withC > 0.03 || withT > 0.03 {
		t.Errorf("with η (%+v): gap %.3f at ½, %.3f in the tails; want both within 0.03", correctionOf(l, nil, 0, true, true), withC, withT)
	}
	if withoutT < 0.05 {
		t.Errorf("without η (%+v): gaps %.3f at ½ and %.3f in the tails; the test needs the tails off", correctionOf(l, nil, 0, false, true), withoutC, withoutT)
	}
	t.Logf("with η: %.3f / %.3f, without: %.3f / %.3f", withC, withT, withoutC, withoutT)
}

// betaDraw draws from Beta(a, b) as X/(X+Y) of two gamma draws (Marsaglia and Tsang, with
// the boost for a shape below 1).
func betaDraw(rng *rand.Rand, a, b float64) float64 {
	x, y := gammaDraw(rng, a), gammaDraw(rng, b)
	return x / (x + y)
}

func gammaDraw(rng *rand.Rand, a float64) float64 {
	if a < 1 {
		return gammaDraw(rng, a+1) * math.Pow(rng.Float64(), 1/a)
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		if u := rng.Float64(); math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}

// TestDispersionByCountDrawsCountsTogether: predictions of mean ½, most with count 2 (a
// prior alone) and some with 6 (evidence borrowed from neighbours), whose truth is surer
// with that evidence but less than it says (the truth's count is half of 2·(n/2)^½: 1 and
// 1.73). One scale cannot be honest for both counts; with the power of the count (θ) the fit
// finds the truth and both are within 0.03.
func TestDispersionByCountDrawsCountsTogether(t *testing.T) {
	type grp struct {
		k     int64
		count float64
	}
	rng := rand.New(rand.NewPCG(7, 3))
	var groups []grp
	for i := range 4000 {
		n := 2.0
		if i%3 == 0 {
			n = 6
		}
		c := 0.5 * 2 * math.Sqrt(n/2)
		p := betaDraw(rng, c/2, c/2)
		var k int64
		for range 8 {
			if rng.Float64() < p {
				k++
			}
		}
		groups = append(groups, grp{k, n})
	}
	l := newLikelihood()
	for _, g := range groups {
		l.add(g.k, 8, 0.5, g.count, 0)
	}
	worst := func(k correction) float64 {
		var pred, real, n [2]float64
		for _, g := range groups {
			c := 0
			if g.count != 2 {
				c = 1
			}
			m, cnt := k.apply(0.5, g.count, 0)
			pred[c] += BetaBinomialDegenerate(m*cnt, (1-m)*cnt, 8)
			if g.k == 0 || g.k == 8 {
				real[c]++
			}
			n[c]++
		}
		return max(math.Abs(pred[0]-real[0])/n[0], math.Abs(pred[1]-real[1])/n[1])
	}
	with, without := correctionOf(l, nil, 0, true, true), correctionOf(l, nil, 0, true, false)
	if g := worst(with); g > 0.03 {
		t.Errorf("with θ (%+v): worst gap %.3f, want within 0.03", with, g)
	}
	if g := worst(without); g < 0.05 {
		t.Errorf("without θ (%+v): worst gap %.3f; the test needs one count off", without, g)
	}
}

// TestDispersionThroughJSONPredictsTheSame: a State whose Dispersion went through JSON (as
// the scheduler stores it, float32 in base64) gives the same predictions, bit for bit, and the
// same next Dispersion as the State itself; the stored form is small.
func TestDispersionThroughJSONPredictsTheSame(t *testing.T) {
	w := newDispersionWorld()
	c := newChain(t, DefaultParams())
	for round := int64(1); round <= 6; round++ {
		c.call(t, w.g, w.tasks, round)
		w.round(round, 1.5)
	}
	data, err := json.Marshal(c.st.Dispersion)
	if err != nil {
		t.Fatal(err)
	}
	var back Dispersion
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if per := len(data) / (len(back.Env) + 2); per > 3000 {
		t.Errorf("stored dispersion: %d bytes, %d per likelihood", len(data), per)
	}
	stored := c.st
	stored.Dispersion = back
	pa, na, err := c.pr.Predict(w.g, w.tasks, 7, c.st)
	if err != nil {
		t.Fatal(err)
	}
	pa = clonePreds(pa)
	pb, nb, err := c.pr.Predict(w.g, w.tasks, 7, stored)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pa {
		if pa[i] != pb[i] {
			t.Fatalf("node %d: %+v through JSON, %+v without", i, pb[i], pa[i])
		}
	}
	for j := range na.Dispersion.Global.LL {
		if a, b := na.Dispersion.Global.LL[j], nb.Dispersion.Global.LL[j]; math.Float64bits(a) != math.Float64bits(b) {
			t.Fatalf("next global log-likelihood %d: %v through JSON, %v without", j, b, a)
		}
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

// TestUninformedPartsStayNeutral: groups that were all predicted at their environment's
// mean, ½, with the count countRef (what the first request of a database predicts for every
// task) tell the scale of the count and nothing of the slope, η or θ, whose points tie
// exactly; the correction keeps those at unit. Before, the grid's first slope (0) won the
// tie, and the next request answered every untried task with its environment's mean alone.
// Parts the groups do inform are still fitted.
func TestUninformedPartsStayNeutral(t *testing.T) {
	ks := []int64{0, 0, 0, 8, 8, 3, 4, 0, 1, 8, 0, 2, 5, 0, 0, 7}
	atCentre := newLikelihood()
	for _, k := range ks {
		atCentre.add(k, 8, 0.5, countRef, 0)
	}
	// the same successes, predicted at means spread about a centre that they do not follow:
	// a slope below 1 fits them better
	spread := newLikelihood()
	for i, k := range ks {
		spread.add(k, 8, []float64{0.05, 0.95}[i%2], countRef, 0)
	}
	for _, tc := range []struct {
		name           string
		ll             *Likelihood
		byMean, byCnt  bool
		wantSlope      float64
		wantScaleBelow float64 // the scale the groups do tell: over-dispersed, so below 1
	}{
		{"at the centre", atCentre, true, true, 1, 1},
		{"at the centre, η and θ off", atCentre, false, false, 1, 1},
		{"spread about the centre", spread, true, true, 0, 1.01},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := correctionOf(tc.ll, nil, 0, tc.byMean, tc.byCnt)
			if tc.wantSlope == 1 && (k.slope != 1 || k.eta != 0 || k.theta != 1) {
				t.Errorf("correction %+v: want slope 1, η 0, θ 1 (nothing told them)", k)
			}
			if tc.wantSlope != 1 && k.slope >= 1 {
				t.Errorf("correction %+v: want a slope below 1 (the means did not follow)", k)
			}
			if !(k.scale < tc.wantScaleBelow) {
				t.Errorf("correction %+v: want a scale below %g", k, tc.wantScaleBelow)
			}
		})
	}
}
