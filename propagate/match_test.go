package propagate

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

// TestMatchFactorMatchesTheRealisedShare: the factor matchFactor returns makes the mean
// predicted chance of a degenerate group equal the share realised, for shares above and
// below what the uncorrected predictions say; shares out of reach give the bound; too few
// groups measure nothing.
func TestMatchFactorMatchesTheRealisedShare(t *testing.T) {
	mk := func(deg, n int) []group {
		var out []group
		for i := range n {
			k := int64(4)
			if i < deg {
				k = 8 * int64(i%2) // all failures or all successes
			}
			out = append(out, group{b: Baseline{Pred: 0.3 + 0.4*float64(i%5)/4, Count: 6, Centre: 0}, k: k, n: 8})
		}
		return out
	}
	k := unitCorrection
	for _, c := range []struct {
		name   string
		groups []group
		want   float64 // the factor, when a bound; 0: check the match
	}{
		{"half degenerate", mk(20, 40), 0},
		{"a tenth degenerate", mk(4, 40), 0},
		{"none degenerate", mk(0, 40), factorMax},
		{"all degenerate", mk(40, 40), factorMin},
	} {
		f, ok := matchFactor(matchGroups(c.groups, k))
		if !ok {
			t.Fatalf("%s: not measured", c.name)
		}
		if c.want != 0 {
			if f != c.want {
				t.Errorf("%s: factor %v, want the bound %v", c.name, f, c.want)
			}
			continue
		}
		var pred, real float64
		for _, gr := range c.groups {
			m, n := k.apply(gr.b.Pred, gr.b.Count, gr.b.Centre)
			pred += BetaBinomialDegenerate(m*n*f, (1-m)*n*f, 8)
			if gr.k == 0 || gr.k == gr.n {
				real++
			}
		}
		if d := (pred - real) / float64(len(c.groups)); math.Abs(d) > 1e-6 {
			t.Errorf("%s: factor %v predicts %v degenerate groups for %v realised", c.name, f, pred, real)
		}
	}
	if _, ok := matchFactor(matchGroups(mk(2, minFactorGroups-1), k)); ok {
		t.Errorf("%d groups measured a factor", minFactorGroups-1)
	}
}

// curseWorld is one environment of 800 tasks, half of which succeed half the time and half
// nearly always or nearly never. Each round rolls out 16 untried tasks and then the 48 tried
// tasks of the highest predicted variance, as selection would; a task whose group was
// informative is trained on and gets easier by learn on the logit scale. The tasks chosen
// again are those that looked informative, and the ones that were moved furthest from
// their evidence by training: they come back degenerate more often than their predictions
// say, by more than a re-fitted spread of the whole channel takes back.
type curseWorld struct {
	g     *graph.Graph
	tasks []stats.Task
	p     []float64
	rng   *rand.Rand
	next  int
	learn float64 // how far (logit) a task moves when its group was informative
}

func newCurseWorld() *curseWorld {
	const n = 800
	w := &curseWorld{rng: rand.New(rand.NewPCG(3, 5)), learn: 1}
	var nodes []graph.Node
	for i := range n {
		nodes = append(nodes, graph.Node{Env: 0, Task: fmt.Sprintf("t%03d", i)})
		w.p = append(w.p, []float64{0.5, 0.04, 0.5, 0.96}[i%4])
	}
	w.g = graph.New([]string{"mixed"}, nodes, nil)
	w.tasks = make([]stats.Task, n)
	return w
}

// round rolls out this round's groups and returns the tried tasks it chose again.
func (w *curseWorld) round(round int64, preds []Prediction) []int {
	var tried []int
	for i := range w.next {
		tried = append(tried, i)
	}
	slices.SortStableFunc(tried, func(a, b int) int { return cmp.Compare(preds[b].Var, preds[a].Var) })
	tried = tried[:min(48, len(tried))]
	for range 16 {
		w.group(w.next, round)
		w.next++
	}
	for _, i := range tried {
		w.group(i, round)
	}
	return tried
}

func (w *curseWorld) group(i int, round int64) {
	var grp stats.Group
	var k float64
	for range 8 {
		r := bernoulli(w.rng, w.p[i])
		k += r
		w.tasks[i].Add(r, round, round, true, &grp, stats.DefaultDecay)
	}
	if k > 0 && k < 8 { // trained on: a task whose group taught something gets easier
		w.p[i] = sigmoid(logit(w.p[i]) + w.learn)
	}
}

// curseGap runs the curse world for 30 rounds and returns the mean predicted chance of a
// degenerate group of the tried tasks chosen again in rounds 11-30, minus the share of them
// that came back degenerate.
func curseGap(t *testing.T, p Params) float64 {
	w := newCurseWorld()
	c := newChain(t, p)
	var pred, real, n float64
	for round := int64(1); round <= 30; round++ {
		preds := c.call(t, w.g, w.tasks, round)
		before := append([]stats.Task(nil), w.tasks...)
		chosen := w.round(round, preds)
		if round <= 10 {
			continue
		}
		for _, i := range chosen {
			dn, ds := w.tasks[i].Rollouts-before[i].Rollouts, w.tasks[i].Sum-before[i].Sum
			pred += c.pr.Pick(c.st, preds[i], true, false).PDeg
			if ds == 0 || ds == float64(dn) {
				real++
			}
			n++
		}
	}
	return (pred - real) / n
}

// TestDispersionMatchCorrectsTheWinnersCurse: in the curse world the re-chosen correction
// the likelihood fits leaves selection's picks predicted less degenerate than they come back;
// the matched factor closes the gap.
func TestDispersionMatchCorrectsTheWinnersCurse(t *testing.T) {
	on, off := DefaultParams(), DefaultParams()
	off.DispersionMatch = false
	// the re-chosen trend follows this world's learning too (it halves the gap without the
	// factor): off, so that the factor is tested alone
	on.RechosenTrend, off.RechosenTrend = 0, 0
	gOn, gOff := curseGap(t, on), curseGap(t, off)
	t.Logf("predicted − realised degenerate share of the picks tried before: matched %.3f, not %.3f", gOn, gOff)
	if math.Abs(gOff) < 0.04 {
		t.Fatalf("without the factor the gap is %.3f: the world does not show the curse it tests", gOff)
	}
	if math.Abs(gOn) > math.Abs(gOff)/2 {
		t.Errorf("with the factor the gap is %.3f, without %.3f: want less than half", gOn, gOff)
	}
}

// BenchmarkMatchFactor is the re-chosen factor's cost per request for 512 re-chosen groups
// (one thread), to be read beside BenchmarkGroupsLL/products, the likelihoods of as many
// groups under the whole grid that every request computes anyway.
func BenchmarkMatchFactor(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	groups := make([]group, 512)
	for i := range groups {
		groups[i] = group{b: Baseline{Pred: 0.05 + 0.9*rng.Float64(), Count: 2 + 30*rng.Float64(), Centre: rng.NormFloat64(), Tried: true},
			k: rng.Int64N(9), n: 8}
	}
	k := correction{0.5, 0.7, 0.5, 1, 0}
	for b.Loop() {
		matchFactor(matchGroups(groups, k))
	}
}

// matchGroups is groups as predicted under correction k.
func matchGroups(groups []group, k correction) []MatchGroup {
	out := make([]MatchGroup, len(groups))
	for i, gr := range groups {
		out[i] = matchGroup(gr, k)
	}
	return out
}
