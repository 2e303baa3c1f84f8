package propagate

import "math"

// The re-chosen factor (Params.DispersionMatch): its bounds, how far a call moves it
// towards what its groups measured, and the least number of groups that measure it.
const (
	factorMin       = 1.0 / 16
	factorMax       = 4
	factorRate      = 0.2
	minFactorGroups = 8
)

// validFactor is f when it is a factor within the bounds, else 0 (unset), as a state stored
// by another version may hold.
func validFactor(f float64) float64 {
	if !(f >= factorMin && f <= factorMax) {
		return 0
	}
	return f
}

// newFactor is the stored never-tried factor, 1 when unset.
func (d Dispersion) newFactor() float64 {
	if f := validFactor(d.NewFactor); f > 0 {
		return f
	}
	return 1
}

// rechosenFactor is the stored re-chosen factor, 1 when unset.
func (d Dispersion) rechosenFactor() float64 {
	if f := validFactor(d.RechosenFactor); f > 0 {
		return f
	}
	return 1
}

// matchRechosen moves the re-chosen factor a share factorRate of the way (on the log scale)
// towards the factor that the groups of tasks tried before that selection picked measure
// (matchFactor), under the re-chosen correction those groups were predicted with: the one
// the likelihood measured before this call's groups. It must run before they are added.
func (d *drift) matchRechosen(groups []group) {
	var picked []group
	for _, gr := range groups {
		if gr.b.Tried && !gr.b.Random && !(d.stuck && stuckBaseline(gr.b)) {
			picked = append(picked, gr)
		}
	}
	k := correctionOf(d.disp.Rechose, nil, 0, d.byMean, d.byCount)
	f, ok := matchFactor(picked, func(group) correction { return k })
	if !ok {
		return
	}
	d.disp.RechosenFactor = towards(d.disp.rechosenFactor(), f)
}

// matchNew moves the never-tried factor (Params.NewMatch) as matchRechosen moves the
// re-chosen one, from the groups of tasks never tried that selection picked in environments
// whose rewards are 0 or 1, each under the correction of its environment that the likelihoods
// measured before this call's groups (what its prediction was made with). It must run before
// they are added.
func (d *drift) matchNew(groups []group) {
	var picked []group
	for _, gr := range groups {
		if !gr.b.Tried && !gr.b.Random && !gr.graded {
			picked = append(picked, gr)
		}
	}
	byEnv := map[string]correction{}
	f, ok := matchFactor(picked, func(gr group) correction {
		k, seen := byEnv[gr.b.Env]
		if !seen {
			k = d.newCorrection(gr.b.Env)
			byEnv[gr.b.Env] = k
		}
		return k
	})
	if !ok {
		return
	}
	d.disp.NewFactor = towards(d.disp.newFactor(), f)
}

// towards is prev moved a share factorRate of the way to f on the log scale, within the
// factor's bounds.
func towards(prev, f float64) float64 {
	next := math.Exp((1-factorRate)*math.Log(prev) + factorRate*math.Log(f))
	return min(max(next, factorMin), factorMax)
}

// matchFactor returns the factor f of the count, within [factorMin, factorMax], under which
// the mean chance of a degenerate group that each group's correction k(group) with its count
// times f predicts for the groups equals the share of them that came back degenerate (all successes or all
// failures); false with fewer than minFactorGroups groups. The chance falls as the count
// grows, so a bisection on log f finds it; a share outside what the bounds can predict
// gives the nearer bound.
func matchFactor(groups []group, k func(group) correction) (float64, bool) {
	if len(groups) < minFactorGroups {
		return 0, false
	}
	ms, ns := make([]float64, len(groups)), make([]float64, len(groups))
	var deg float64
	for i, gr := range groups {
		ms[i], ns[i] = k(gr).apply(gr.b.Pred, gr.b.Count, gr.b.Centre)
		if gr.k == 0 || gr.k == gr.n {
			deg++
		}
	}
	realised := deg / float64(len(groups))
	predicted := func(lf float64) float64 {
		f, s := math.Exp(lf), 0.0
		for i, gr := range groups {
			c := ns[i] * f
			s += BetaBinomialDegenerate(ms[i]*c, (1-ms[i])*c, int(gr.n))
		}
		return s / float64(len(groups))
	}
	lo, hi := math.Log(factorMin), math.Log(factorMax)
	switch {
	case predicted(lo) <= realised:
		return factorMin, true
	case predicted(hi) >= realised:
		return factorMax, true
	}
	for range 30 {
		mid := (lo + hi) / 2
		if predicted(mid) > realised {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Exp((lo + hi) / 2), true
}
