package batcher

import (
	"math"

	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/stats"
)

// MaxHorizon bounds the horizon of ExpectedLasting: its cost grows with the square of the
// horizon, and its alternating sum loses about log10 C(h, h/2) digits (4 at 16).
const MaxHorizon = 16

// LastingHorizon is the horizon ExploitLasting values a task over, measured from the
// statistics: the mean number of informative groups (groups of two or more rollouts whose
// rewards were not all equal) of the tasks that gave at least one, rounded and bounded by 1
// and MaxHorizon. It is how many informative groups a task gives once it is found to be
// informative, as this training has realised it so far: 1 (this step alone) before any was.
// It depends on the statistics alone, so a restarted daemon answers the same.
func LastingHorizon(tasks []stats.Task) int {
	var groups, found int64
	for i := range tasks {
		if inf := tasks[i].Groups - tasks[i].Degenerate; inf > 0 {
			groups += inf
			found++
		}
	}
	if found == 0 {
		return 1
	}
	h := int(math.Round(float64(groups) / float64(found)))
	return max(1, min(MaxHorizon, h))
}

// ExpectedLasting is the expected share of informative groups (not all rewards equal) over the
// next h steps of a task with prediction pr that is chosen now and chosen again each next step
// only while its groups have been informative: (1/h)·Σ_{k=1..h} P(the first k groups are all
// informative), in [0, 1]. It is the value of what choosing a task now makes possible, not of
// this step alone (h = 1 is 1 − PDeg). A task whose posterior is wide (untried, in an
// environment whose tasks are mostly solved always or never) and that comes back unequal is
// likely in the middle and stays informative; one whose posterior is narrow near 0 or 1 (seen
// all-equal, or unequal once by chance) is soon degenerate again. Both may have the same chance
// of an informative group now; this measure tells them apart, from the posterior alone.
//
// For 0/1 rewards it is exact under the Beta-Binomial model, p ~ Beta(a, b): with d(p) =
// p^g + (1−p)^g the chance that one group is degenerate, P(k in a row) = E[(1−d)^k] =
// Σ_j C(k, j)(−1)^j E[d^j], and E[d^j] = Σ_i C(j, i) B(a+g·i, b+g·(j−i)) / B(a, b). For a task
// with continuous rewards the Beta-Binomial value is scaled, like ExpectedSpread's, by how
// often the task's groups are informative against the Beta-Binomial's own chance. 0 when
// g < 2; h is bounded by 1 and MaxHorizon.
func ExpectedLasting(pr *propagate.Prediction, g, h int) float64 {
	if g < 2 {
		return 0
	}
	a, b := pr.Alpha, pr.Beta
	if !(a > 0 && b > 0) || math.IsInf(a+b, 0) {
		return 0
	}
	h = max(1, min(MaxHorizon, h))
	now := 1 - propagate.BetaBinomialDegenerate(a, b, g)
	if h == 1 {
		return clamp01(1 - pr.PDegenerate(g))
	}
	var ed [MaxHorizon + 1]float64 // ed[j] = E[d^j]
	degMoments(a, b, g, h, ed[:h+1])
	ed[1] = 1 - now // the exact product, for the terms that cancel most
	sum, prev := 0.0, 1.0
	for k := 1; k <= h; k++ {
		pk, c := 0.0, 1.0
		for j := 0; j <= k; j++ {
			if j > 0 {
				c = c * float64(k-j+1) / float64(j)
			}
			if j%2 == 0 {
				pk += c * ed[j]
			} else {
				pk -= c * ed[j]
			}
		}
		// A chance of k in a row is in [0, the chance of k−1 in a row]: bound what rounding
		// moved.
		pk = max(0, min(prev, pk))
		sum += pk
		prev = pk
	}
	v := sum / float64(h)
	if pr.Continuous {
		if now <= 0 {
			return 0
		}
		v *= (1 - pr.PDegenerate(g)) / now
	}
	return clamp01(v)
}

// degMoments sets ed[j] = E[d(p)^j] for j < len(ed), p ~ Beta(a, b), d(p) = p^g + (1−p)^g:
// Σ_i C(j, i) B(a+g·i, b+g·(j−i)) / B(a, b), from 3·len(ed) log-gammas.
func degMoments(a, b float64, g, h int, ed []float64) {
	var la, lb, ln [MaxHorizon + 1]float64
	for k := 0; k <= h; k++ {
		la[k], _ = math.Lgamma(a + float64(g*k))
		lb[k], _ = math.Lgamma(b + float64(g*k))
		ln[k], _ = math.Lgamma(a + b + float64(g*k))
	}
	for j := 0; j <= h; j++ {
		s, c := 0.0, 1.0
		for i := 0; i <= j; i++ {
			if i > 0 {
				c = c * float64(j-i+1) / float64(i)
			}
			// B(a+g·i, b+g·(j−i)) / B(a, b)
			s += c * math.Exp(la[i]+lb[j-i]-ln[j]-la[0]-lb[0]+ln[0])
		}
		ed[j] = s
	}
}
