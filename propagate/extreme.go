package propagate

import "github.com/envsched/envsched/stats"

// The extreme channel (Params.DispersionExtreme): tasks tried before with two or more groups
// (rewards 0 or 1), other than the stuck ones when the stuck channel is on. In the acceptance
// world plateau (BENCHMARKS.md, "Where envsched is behind `known`") the re-tries of tasks
// whose own groups showed them mostly failed or mostly solved were predicted 0.25 degenerate
// and came back 0.36, those in between 0.14 against 0.11: the re-chosen channel is calibrated
// on average, not conditionally on how extreme the task's own evidence is, and a rule that
// skipped re-tries of own mean at most 0.15 or at least 0.85 gained there.
//
// So these re-tries get a calibration map of their own, the stuck map's (stuck.go): the
// tasks tried before in two or more groups whose pooled reward so far (every rollout, not
// decayed: what the trainer saw) is at most 0.15 or at least 0.85, accept16's rule's bounds;
// the logit of their chance of an all-equal group is the model's (its posterior after the
// re-chosen correction) plus β·(1, that logit, log2(1 + rounds since its evidence), log2 of
// its groups), fitted online by the Bernoulli likelihood of whether the groups of such tasks
// that selection picked came back all-equal (Newton steps, a ridge towards 0, earlier calls
// kept as a Gaussian decayed by Params.DispersionMemory). The posterior keeps its mean and
// takes the count under which its chance of an all-equal group is the map's, so selection
// reads it, and the answer gives it as it is. The other re-tries are predicted as before.
//
// Measured on the acceptance harness's and the simulator's tuning seeds it moves selection's
// picks as meant (51-89% fewer re-tries of such tasks) and loses a little held-out score
// everywhere (BENCHMARKS.md, "Re-tries whose own evidence is extreme"): it is not a default.
//
// One feature of how extreme the own mean is (its |logit|, or whether it is beyond the bounds)
// in a map of every re-try of two or more groups was tried first: in the test world of
// extreme_test.go its fit left the extreme re-tries as under-predicted as without it, the
// re-tries in between setting the slope of the model's logit for both.

// extremeMinGroups is the least number of groups a task tried before has for the map.
const extremeMinGroups = 2

// extremeBound is the pooled reward at or beyond which (or 1 less it at or below which) a
// task's own evidence is extreme: accept16's rule's bound (BENCHMARKS.md, "Where envsched is
// behind `known`"), not tuned here.
const extremeBound = 0.85

// extremeRidge is the map's ridge in Fisher information, as the stuck map's; but the ridge of
// Trend.fitRidge pulls at every call while what earlier calls measured decays by the memory
// m, so that a ridge r given at each call adds up to r/(1−m) (10 at m = 0.95: in the test
// world it held the map at a third of what the groups said); the map gives each call r·(1−m),
// which adds up to r.
const extremeRidge = 0.5

// extremeMean reports whether a pooled reward sum of n rollouts is extreme.
func extremeMean(sum float64, n int64) bool {
	if n <= 0 {
		return false
	}
	m := sum / float64(n)
	return m <= 1-extremeBound || m >= extremeBound
}

// extremeObs is the map's observation of one group of a task of the channel picked by
// selection, predicted with correction k (the re-chosen one): whether it came back all-equal.
func extremeObs(gr group, k correction) trendObs { return stuckObs(gr, k) }

// extremeTask reports whether a task is of the extreme channel: rolled out in two or more
// groups, rewards all 0 or 1, pooled reward extreme, and, when the stuck channel is on
// (stuck), not stuck.
func extremeTask(t *stats.Task, stuck bool) bool {
	return t.Rollouts > 0 && t.Groups >= extremeMinGroups && !continuous(t) && extremeMean(t.Sum, t.Rollouts) &&
		!(stuck && stuckTask(t))
}

// extremeBaseline reports whether the task of a baseline was of the extreme channel when it
// was chosen (its groups are measured only when all 0 or 1).
func extremeBaseline(b Baseline, stuck bool) bool {
	return b.Tried && b.Groups >= extremeMinGroups && extremeMean(b.Sum, b.Rollouts) && !(stuck && stuckBaseline(b))
}
