package propagate

import "math"

// The stuck channel (Params.DispersionStuck): tasks tried before whose every group so far was
// all-equal, always or never solved. Their posterior is the re-chosen one's: prior, own
// evidence decayed by λ per round since it came, offsets, the re-chosen correction. GRPO
// learns nothing from an all-equal group, so such a task seldom moves; but it is seldom
// re-tried soon, its evidence decays (at 40 rounds λ^40 ≈ 0.015 of it is left) and its
// posterior goes back to its prior, whose spread promises unequal groups the task does not
// give (tuning seeds: selection's stuck re-tries after step 10 predicted 0.27-0.54
// degenerate, realised 0.41-0.78, nearly all 8 or more rounds after their evidence).
//
// Two corrections of one or two parameters, measured on the stuck re-tries that came back,
// were tried and left the picks as over-optimistic as before: the re-chosen correction's
// grid (scale, slope, η, θ) chosen by the stuck groups' own Beta-Binomial likelihood, and the
// count factor or the pull of the mean towards the task's own mean that makes the predicted
// degenerate share of the past stuck picks equal the realised one. Each moves every stuck
// task the same way, and selection then picks the stuck tasks the moved prediction still
// rates most informative, which were no less stuck: the prediction's ranking of stuck tasks
// carries little, and a correction must be able to say so.
//
// So the stuck channel fits a calibration map of its own: the logit of the chance of an
// all-equal group of a stuck task is the model's (its posterior after the re-chosen
// correction) plus β·x, x = (1, that logit, log2(1 + rounds since its evidence), log2 of its
// groups), fitted online by the Bernoulli likelihood of whether the groups of the stuck tasks
// selection picked came back all-equal (the Trend's fit: Newton steps, a ridge towards 0, what
// earlier calls measured kept as a Gaussian decayed by Params.DispersionMemory). A β of the
// model's logit near −1 says the model's ranking carries nothing. The posterior keeps its
// mean and takes the count under which its chance of an all-equal group of the request's G
// is the map's: so its within-group variance, what selection values, is honest with it.

// minStuckGroups is the least (decayed) number of stuck groups measured for the map to be
// used; before, stuck tasks are predicted as every task tried before.
const minStuckGroups = 1

// stuckRidge is the map's ridge, in Fisher information (the trend's is 4: a Bernoulli group
// carries at most ¼, against about 1.5 for a binomial group of 8).
const stuckRidge = 0.5

// stuckBound bounds the map's logit offset.
const stuckBound = 6

// stuckFeatures are the map's features for a model chance d of an all-equal group, evidence
// age rounds old and groups groups.
func stuckFeatures(d, age float64, groups int64) [trendDim]float64 {
	ld := min(max(logit(d), -stuckBound), stuckBound)
	return [trendDim]float64{1, ld, min(math.Log2(1+max(age, 0)), 6), min(math.Log2(float64(max(groups, 1))), 6)}
}

// stuckObs is the map's observation of one group of a stuck task picked by selection,
// predicted with correction k (the re-chosen one): whether it came back all-equal.
func stuckObs(gr group, k correction) trendObs {
	m, n := k.apply(gr.b.Pred, gr.b.Count, gr.b.Centre)
	d := BetaBinomialDegenerate(m*n, (1-m)*n, int(gr.n))
	deg := 0.0
	if gr.k == 0 || gr.k == gr.n {
		deg = 1
	}
	return trendObs{x: stuckFeatures(d, gr.b.Stale, gr.b.Groups), base: logit(d), k: deg, n: 1}
}

// stuckChance is the map's chance of an all-equal group for a stuck task whose model chance
// is d.
func (tr *Trend) stuckChance(d, age float64, groups int64) float64 {
	return sigmoid(logit(d) + tr.offset(stuckFeatures(d, age, groups), stuckBound))
}

// countFor returns the count c of a Beta of mean m whose chance of g draws all equal is as
// near want as counts from 2^−10 to 2^6 give: the chance falls as the count grows (from 1
// towards m^g + (1−m)^g), so a bisection on log c finds it, 30 halvings.
func countFor(m float64, g int, want float64) float64 {
	f := func(lc float64) float64 {
		c := math.Exp2(lc)
		return BetaBinomialDegenerate(m*c, (1-m)*c, g)
	}
	return math.Exp2(bisectFalling(f, want, -10, 6, 30))
}

// bisectFalling returns where f, falling from lo to hi, crosses want: lo when f(lo) is want
// or less, hi when f(hi) is want or more, else the middle of the interval left after steps
// halvings.
func bisectFalling(f func(float64) float64, want, lo, hi float64, steps int) float64 {
	switch {
	case f(lo) <= want:
		return lo
	case f(hi) >= want:
		return hi
	}
	for range steps {
		mid := (lo + hi) / 2
		if f(mid) > want {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
