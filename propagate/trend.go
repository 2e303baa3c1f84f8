package propagate

import (
	"math"

	"github.com/envsched/envsched/stats"
)

// trendDim is the number of coefficients of the re-chosen trend: an intercept, the gap
// between a task's own evidence and its prediction, how much it was trained and how old its
// evidence is.
const trendDim = 4

// trendPrior is the weight, in groups, of the one re-chosen offset (State.Rechosen) against
// the trend's: the offset of a task is the trend's, N/(N + trendPrior) of it, the rest the
// one offset's, so that a trend that has measured nothing leaves the offset as it was.
const trendPrior = 8

// trendRidge is the weight, in Fisher information, that pulls each coefficient of the trend
// towards 0 at every call: enough that the first call's few groups cannot throw the
// coefficients far, little against the information of one batch's re-chosen groups (about
// 1.5 a group of 8).
const trendRidge = 4

// trendNewton is the number of Newton steps of one call's fit (the objective is concave and
// the fit starts from the last call's coefficients, so a few are plenty).
const trendNewton = 6

// trendHalvings is how many times a Newton step that lowers the objective is halved before
// the step is given up.
const trendHalvings = 30

// Trend is the re-chosen offset as a function of the task (Params.RechosenTrend): the logit
// offset of a task rolled out before is β·x, x = (1, the logit of its own decayed mean less
// that of its prediction, log2 of its rollouts over the group size, log2 of 1 + the rounds
// since its evidence), each clamped. It is
// fitted online to the groups of such tasks that came back, by the binomial likelihood of
// their successes under the predictions made when they were chosen (before any offset),
// with what earlier calls measured kept as a Gaussian of precision Info decayed by the
// memory: so it is a function of the stored State alone. What it measures: a task
// trained on gets easier the more it was trained, and its own evidence, decayed and pulled
// towards its prior, says more about it than the posterior lets it.
type Trend struct {
	Beta [trendDim]float64            `json:"beta"`
	Info [trendDim * trendDim]float64 `json:"info"`
	// N is the decayed number of groups measured.
	N float64 `json:"n"`
}

// trendObs is one group of a task tried before: k successes of n, the features and the
// logit of the mean predicted for it before any offset.
type trendObs struct {
	x    [trendDim]float64
	base float64
	k, n float64
}

// trendFeatures are the features of a task tried before: own is the mean of its decayed
// evidence (shrunk by half a rollout each way), base its predicted mean before any offset,
// rollouts its rollouts, g the group size and age the rounds since its evidence.
func trendFeatures(own, base float64, rollouts int64, g int, age float64) [trendDim]float64 {
	gap := min(max(logit(own)-logit(base), -4), 4)
	trained := min(max(math.Log2(float64(max(rollouts, 1))/float64(max(g, 1))), -3), 6)
	old := min(math.Log2(1+max(age, 0)), 6)
	return [trendDim]float64{1, gap, trained, old}
}

// trendTables hold, for one group size, the features of trendFeatures that depend on a
// whole number alone: trained for 0 to len(trained)−1 rollouts, old for ages 0 to len(old)−1
// (from 63 on it is 6), each worked out by trendFeatures' own expression, so the same bits.
type trendTables struct {
	g            int
	trained, old []float64
}

// trendTableRollouts is how many rollout counts trendTables keeps.
const trendTableRollouts = 4096

// tables returns the tables for group size g, made again only when g changed.
func (tt *trendTables) tables(g int) *trendTables {
	if tt.g == g && tt.trained != nil {
		return tt
	}
	tt.g = g
	tt.trained, tt.old = make([]float64, trendTableRollouts), make([]float64, 64)
	for r := range tt.trained {
		x := trendFeatures(0.5, 0.5, int64(r), g, 0)
		tt.trained[r] = x[2]
	}
	for a := range tt.old {
		x := trendFeatures(0.5, 0.5, 1, g, float64(a))
		tt.old[a] = x[3]
	}
	return tt
}

// features is trendFeatures(own, base, rollouts, tt.g, age) for a node whose logit of base
// is lbase (= logit(base)): the same numbers, with the whole-number features from the tables.
func (tt *trendTables) features(own, lbase float64, rollouts int64, age uint16) [trendDim]float64 {
	gap := min(max(logit(own)-lbase, -4), 4)
	var trained, old float64
	if rollouts >= 0 && rollouts < int64(len(tt.trained)) {
		trained = tt.trained[rollouts]
	} else {
		trained = min(max(math.Log2(float64(max(rollouts, 1))/float64(max(tt.g, 1))), -3), 6)
	}
	if int(age) < len(tt.old) {
		old = tt.old[age]
	} else {
		old = min(math.Log2(1+float64(age)), 6)
	}
	return [trendDim]float64{1, gap, trained, old}
}

// ownMean is the mean of a task's decayed evidence, shrunk by half a rollout each way
// (never 0 or 1; the decay of A and B since their round cancels out).
func ownMean(t *stats.Task) float64 { return (t.A + 0.5) / (t.A + t.B + 1) }

// offset is the trend's offset for features x, within ±bound.
func (tr *Trend) offset(x [trendDim]float64, bound float64) float64 {
	var z float64
	for j, b := range tr.Beta {
		z += b * x[j]
	}
	if !finite(z) {
		return 0
	}
	return min(max(z, -bound), bound)
}

// valid reports whether every number of tr is finite (a State read from elsewhere may not be).
func (tr *Trend) valid() bool {
	for _, v := range tr.Beta {
		if !finite(v) {
			return false
		}
	}
	for _, v := range tr.Info {
		if !finite(v) {
			return false
		}
	}
	return finite(tr.N) && tr.N >= 0
}

// fit returns the trend after the groups obs: the coefficients that maximise their binomial
// log-likelihood plus the Gaussian of what was measured before (mean tr.Beta, precision
// memory·tr.Info) and the ridge towards 0, and the precision after them. Deterministic: the
// groups are summed in their order.
func (tr Trend) fit(obs []trendObs, memory float64) Trend {
	return tr.fitRidge(obs, memory, trendRidge)
}

// fitRidge is fit with the ridge ridge in place of trendRidge.
func (tr Trend) fitRidge(obs []trendObs, memory, ridge float64) Trend {
	if len(obs) == 0 {
		return tr
	}
	prior := tr.Info
	for j := range prior {
		prior[j] *= memory
	}
	beta := tr.Beta
	for range trendNewton {
		grad, hess := tr.gradHess(obs, beta, prior, ridge)
		step, ok := solveSPD(hess, grad)
		if !ok {
			break
		}
		// A full step can overshoot into saturation, where only the ridge pulls, and the next
		// one come straight back: halve it until the objective does not fall.
		now := tr.objective(obs, beta, prior, ridge)
		for range trendHalvings {
			var try [trendDim]float64
			for j := range beta {
				try[j] = beta[j] + step[j]
			}
			if tr.objective(obs, try, prior, ridge) >= now {
				beta = try
				break
			}
			for j := range step {
				step[j] /= 2
			}
		}
	}
	next := Trend{Beta: beta, Info: prior, N: tr.N*memory + float64(len(obs))}
	for _, o := range obs {
		p := sigmoid(o.base + dot(beta, o.x))
		w := o.n * p * (1 - p)
		for r := range trendDim {
			for c := range trendDim {
				next.Info[r*trendDim+c] += w * o.x[r] * o.x[c]
			}
		}
	}
	return next
}

// objective is what fit maximises, at beta: the groups' binomial log-likelihood, less the
// ridge and the Gaussian of what was measured before (precision prior, mean tr.Beta).
func (tr Trend) objective(obs []trendObs, beta [trendDim]float64, prior [trendDim * trendDim]float64, ridge float64) float64 {
	var v float64
	for _, o := range obs {
		z := o.base + dot(beta, o.x)
		v -= o.k*softplus(-z) + (o.n-o.k)*softplus(z) // k·log p + (n−k)·log(1−p)
	}
	for r := range trendDim {
		v -= ridge / 2 * beta[r] * beta[r]
		for c := range trendDim {
			v -= prior[r*trendDim+c] * (beta[r] - tr.Beta[r]) * (beta[c] - tr.Beta[c]) / 2
		}
	}
	return v
}

// softplus is log(1 + e^z), without overflow.
func softplus(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}

// gradHess are the gradient and the negated Hessian of the objective of fit at beta.
func (tr Trend) gradHess(obs []trendObs, beta [trendDim]float64, prior [trendDim * trendDim]float64, ridge float64) (grad [trendDim]float64, hess [trendDim * trendDim]float64) {
	hess = prior
	for r := range trendDim {
		hess[r*trendDim+r] += ridge
		grad[r] -= ridge * beta[r]
		for c := range trendDim {
			grad[r] -= prior[r*trendDim+c] * (beta[c] - tr.Beta[c])
		}
	}
	for _, o := range obs {
		p := sigmoid(o.base + dot(beta, o.x))
		res, w := o.k-o.n*p, o.n*p*(1-p)
		for r := range trendDim {
			grad[r] += res * o.x[r]
			for c := range trendDim {
				hess[r*trendDim+c] += w * o.x[r] * o.x[c]
			}
		}
	}
	return grad, hess
}

func dot(a, b [trendDim]float64) float64 {
	var s float64
	for j := range a {
		s += a[j] * b[j]
	}
	return s
}

// solveSPD solves h·x = g for a symmetric positive definite h by Gaussian elimination;
// false when h is singular or a number is not finite.
func solveSPD(h [trendDim * trendDim]float64, g [trendDim]float64) ([trendDim]float64, bool) {
	const n = trendDim
	for col := range n {
		piv := h[col*n+col]
		if !(math.Abs(piv) > 1e-12) || !finite(piv) {
			return g, false
		}
		for r := col + 1; r < n; r++ {
			f := h[r*n+col] / piv
			for c := col; c < n; c++ {
				h[r*n+c] -= f * h[col*n+c]
			}
			g[r] -= f * g[col]
		}
	}
	var x [trendDim]float64
	for r := n - 1; r >= 0; r-- {
		s := g[r]
		for c := r + 1; c < n; c++ {
			s -= h[r*n+c] * x[c]
		}
		x[r] = s / h[r*n+r]
		if !finite(x[r]) {
			return x, false
		}
	}
	return x, true
}
