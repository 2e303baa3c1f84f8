package batcher

import (
	"math"

	"github.com/envsched/envsched/propagate"
)

// ExpectedSpread is the expected spread of the rewards of a group of g rollouts of a task with
// prediction pr: E[2·sqrt(k/g·(1−k/g))] for k successes, in [0, 1] (a degenerate group has
// spread 0; a group split evenly, 1). For 0/1 rewards k is Beta-Binomial(g, Alpha, Beta) and the
// expectation is exact. For a task with continuous rewards it is 2·sqrt(Var)·(1 − PDegenerate)
// / (1 − the Beta-Binomial's own PDegenerate), the spread of rewards of that variance where a
// group is informative as often as the task's groups have been; 0 when g < 2.
func ExpectedSpread(pr *propagate.Prediction, g int) float64 {
	if g < 2 {
		return 0
	}
	if pr.Continuous {
		bb := propagate.BetaBinomialDegenerate(pr.Alpha, pr.Beta, g)
		s := 2 * math.Sqrt(max(0, pr.Var))
		if bb < 1 {
			s *= (1 - pr.PDegenerate(g)) / (1 - bb)
		}
		return clamp01(s)
	}
	return betaBinomialSpread(pr.Alpha, pr.Beta, g)
}

// betaBinomialSpread is E[2·sqrt(k/g·(1−k/g))] for k ~ Beta-Binomial(g, a, b), a, b > 0. The
// probabilities are built by the ratio P(k+1)/P(k) = (g−k)(a+k) / ((k+1)(b+g−k−1)) from an
// unnormalised P(0) = 1 and normalised at the end, rescaled on the way so that nothing
// overflows: O(g) multiplications, no logarithm.
func betaBinomialSpread(a, b float64, g int) float64 {
	if !(a > 0 && b > 0) {
		return 0
	}
	w, sum, acc := 1.0, 1.0, 0.0
	fg := float64(g)
	for k := 0; k < g; k++ {
		fk := float64(k)
		w *= (fg - fk) * (a + fk) / ((fk + 1) * (b + fg - fk - 1))
		q := (fk + 1) / fg
		sum += w
		acc += w * 2 * math.Sqrt(q*(1-q))
		if sum > 1e250 {
			w, sum, acc = w*1e-250, sum*1e-250, acc*1e-250
		}
	}
	return clamp01(acc / sum)
}
