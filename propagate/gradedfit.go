package propagate

import (
	"math"
	"slices"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

// The all-equal chance of a task with graded rewards and groups of its own (Params.GradedFit).
// Such a task's next group is all-equal with a chance q of its own, which its groups measure:
// q has a Beta prior centred on the model's chance q0 (the Beta-Binomial of the task's
// posterior, shifted or not by its environment's measured gap, see graded.go) with a strength
// of w groups, so that after D all-equal groups of n its posterior mean is (D + w·q0)/(n + w),
// and its predicted within-group variance is shrunk towards the model's by the same w groups.
// A fixed w (Params.VarPrior, 2) is right only when tasks differ from the model by as much as
// a Beta of 2 groups says; in an environment whose tasks split into ones that always return
// all-0.5 groups and ones that never do, the observed groups say far more. So w, and whether
// the centre is shifted, are fitted per environment by the Beta-Binomial marginal likelihood
// of every such task's all-equal groups (empirical Bayes), the environment's likelihood
// shrunk towards all graded environments' by gradedFitPrior tasks' worth, with a weak prior
// on the strength that keeps the default where the groups cannot tell. Selection decides
// which tasks get more groups from the groups they returned, never from what it does not
// see, so the likelihood stays valid for the tasks it chose again. Each task's model chance
// is taken at its own group size (rollouts per group, rounded). An environment without such
// tasks keeps w = VarPrior and the unshifted centre, as before; environments with 0/1 rewards
// only are not touched.

// gradedStrengths are the strengths w of the grid, in multiples of Params.VarPrior (2 groups
// by default: 0.25 to 32 groups). The default, 1, wins ties (see gradedFit.choose).
var gradedStrengths = [...]float64{0.125, 0.25, 0.5, 1, 2, 4, 8, 16}

// gradedFitPrior is the weight, in tasks, of all graded environments' mean log-likelihood per
// task in one environment's: an environment of a few tasks with groups follows the others.
const gradedFitPrior = 16

// gradedStrengthPrior is the log prior, with its sign turned, of a strength m times
// Params.VarPrior: a Gaussian in log2(m) of standard deviation 1, so that a strength 8 times
// away from the default costs 4.5 nats. When the tasks' groups hardly tell strengths apart
// (every task with 2 groups and none all-equal, say), the likelihood's differences are
// small and the default stays; an environment of a hundred tasks that split into ones
// always all-equal and ones never moves it easily.
func gradedStrengthPrior(m float64) float64 {
	l := math.Log2(m)
	return l * l / 2
}

// gradedUnit is the index of strength 1 (Params.VarPrior itself) in gradedStrengths.
const gradedUnit = 3

// gradedCells is the number of (strength, shifted or not) cells of the grid.
const gradedCells = 2 * len(gradedStrengths)

// gradedFit is the fit of one environment: its log-likelihood per cell, its number of tasks,
// and the chosen strength and whether the centre is shifted.
type gradedFit struct {
	ll      [gradedCells]float64
	tasks   float64
	w       float64
	shifted bool
}

// fitGraded refits the continuous tasks with groups of every graded environment (see above):
// it reads pr.out's posteriors, sets each such prediction's prior weight, centre shift and
// variance, and leaves every other prediction as it is. It is sequential, in node order, so
// the sums do not depend on the number of CPUs; it visits only environments with graded
// rewards.
func (pr *Predictor) fitGraded(g *graph.Graph, tasks []stats.Task, round int64) {
	if !slices.ContainsFunc(pr.envs, func(e envSums) bool { return e.cont }) {
		return // no graded environment: no pass over the nodes
	}
	fits := make([]gradedFit, len(pr.envs))
	any := false
	for i := range tasks {
		e := g.Nodes[i].Env
		if !pr.envs[e].cont || !gradedTask(&tasks[i]) {
			continue
		}
		fits[e].add(&pr.out[i], &tasks[i], pr.envs[e].degOff, pr.p.VarPrior)
		any = true
	}
	if !any {
		return
	}
	var all gradedFit
	for e := range fits {
		all.merge(&fits[e])
	}
	for e := range fits {
		fits[e].choose(&all, pr.p.VarPrior)
	}
	for i := range tasks {
		e := g.Nodes[i].Env
		if pr.envs[e].cont && gradedTask(&tasks[i]) {
			pr.refitTask(&pr.out[i], &tasks[i], &fits[e], e, round)
		}
	}
}

// gradedTask reports whether a task's all-equal chance is its groups' (PDegenerate's blend).
func gradedTask(t *stats.Task) bool { return t.Groups > 0 && continuous(t) }

// add counts one task: the log-likelihood of its all-equal groups under every cell.
func (f *gradedFit) add(p *Prediction, t *stats.Task, off, unit float64) {
	n := float64(t.Groups)
	g := int(min(max(math.Round(float64(t.Rollouts)/n), 2), 1024))
	bb := BetaBinomialDegenerate(p.Alpha, p.Beta, g)
	centres := [2]float64{bb, shiftDegenerate(bb, off)}
	d := float64(t.Degenerate)
	for s, q0 := range centres {
		q0 = min(max(q0, 1e-6), 1-1e-6)
		for k, m := range gradedStrengths {
			w := m * unit
			f.ll[s*len(gradedStrengths)+k] += betaBinomialLog(d, n, w*q0, w*(1-q0))
		}
	}
	f.tasks++
}

// betaBinomialLog is the log-likelihood of d successes of n under a Beta(a, b) chance, without
// the binomial coefficient (the same for every cell).
func betaBinomialLog(d, n, a, b float64) float64 {
	return lgamma(d+a) + lgamma(n-d+b) - lgamma(n+a+b) - lgamma(a) - lgamma(b) + lgamma(a+b)
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

func (f *gradedFit) merge(o *gradedFit) {
	for c := range f.ll {
		f.ll[c] += o.ll[c]
	}
	f.tasks += o.tasks
}

// choose sets the environment's cell: the most likely under its log-likelihood plus
// gradedFitPrior tasks' worth of all's mean per task and the strength's prior
// (gradedStrengthPrior); unit is Params.VarPrior. The cell of
// strength unit, unshifted, wins ties (so an environment that measured nothing keeps it),
// then the grid's order.
func (f *gradedFit) choose(all *gradedFit, unit float64) {
	f.w, f.shifted = unit, false
	if f.tasks == 0 && all.tasks == 0 {
		return
	}
	score := func(c int) float64 {
		s := f.ll[c] - gradedStrengthPrior(gradedStrengths[c%len(gradedStrengths)])
		if all.tasks > 0 {
			s += gradedFitPrior * all.ll[c] / all.tasks
		}
		return s
	}
	best := score(gradedUnit)
	for c := range f.ll {
		if s := score(c); s > best {
			best, f.w, f.shifted = s, unit*gradedStrengths[c%len(gradedStrengths)], c >= len(gradedStrengths)
		}
	}
}

// refitTask sets a continuous task's prediction from its environment's fit: the prior weight
// and centre shift PDegenerate blends with, and the variance shrunk towards the model's by
// the fitted weight in place of VarPrior.
func (pr *Predictor) refitTask(p *Prediction, t *stats.Task, f *gradedFit, env int32, round int64) {
	s := &pr.envs[env]
	p.varPrior = float32(f.w)
	if f.shifted {
		p.degOff = float32(s.degOff)
	}
	fd := pr.decay(t.Round, round)
	wv, wn := t.WV*fd, t.WN*fd
	bv := BetaVariance(p.Alpha, p.Beta)
	p.Var = min(clamp01((wv+f.w*s.varRatio*bv)/(wn+f.w)), 0.25)
	if !pr.p.Lean {
		p.PDeg = p.PDegenerate(pr.p.GroupSize)
	}
}
