package propagate

import (
	"math"
	"slices"
)

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

// randomFactor is the stored random-slot factor, 1 when unset.
func (d Dispersion) randomFactor() float64 {
	if f := validFactor(d.RandomFactor); f > 0 {
		return f
	}
	return 1
}

// lowFactor is the stored low-value re-chosen factor, the re-chosen factor when unset.
func (d Dispersion) lowFactor() float64 {
	if f := validFactor(d.LowFactor); f > 0 {
		return f
	}
	return d.rechosenFactor()
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
	k := correctionOf(d.disp.Rechose, nil, 0, d.byMean, d.byCount)
	var obs []MatchGroup
	low := d.disp.LowPending
	for _, gr := range groups {
		if gr.b.Tried && !gr.b.Random && !(d.stuck && stuckBaseline(gr.b)) && !(d.extreme && extremeBaseline(gr.b, d.stuck)) {
			g := matchGroup(gr, k)
			if d.matchLow && lowValue(g.Mean, g.Count) {
				low = append(low, g)
			} else {
				obs = append(obs, g)
			}
		}
	}
	if f, ok := matchFactor(obs); ok {
		d.disp.RechosenFactor = towards(d.disp.rechosenFactor(), f)
	}
	if d.matchLow {
		d.disp.LowFactor, d.disp.LowPending = matchPending(d.disp.LowFactor, d.disp.lowFactor(), low)
	}
}

// matchPending is a factor measured from groups that may be too few: the stored factor moved
// towards (from prev, its value or what stands in for it while unset) what the groups
// measure, and no groups left waiting; or, with fewer than minFactorGroups, the factor as it
// was and the groups, to wait in the state for the next ones.
func matchPending(stored, prev float64, groups []MatchGroup) (float64, []MatchGroup) {
	f, ok := matchFactor(groups)
	if !ok {
		return stored, groups
	}
	return towards(prev, f), nil
}

// matchNew moves the never-tried factor (Params.NewMatch) as matchRechosen moves the
// re-chosen one, from the groups of tasks never tried that selection picked in environments
// whose rewards are 0 or 1, each under the correction of its environment that the likelihoods
// measured before this call's groups (what its prediction was made with). It must run before
// they are added. Such picks can be few a request (one or two once most of a small catalogue
// is tried): while fewer than minFactorGroups have come back, they are kept, as predicted,
// in the state (Dispersion.NewPending) and measured with the next ones.
func (d *drift) matchNew(groups []group) {
	obs := d.disp.NewPending
	byEnv := map[string]correction{}
	starts := map[int64]correction{} // the answer's start by group size, while nothing is measured
	for _, gr := range groups {
		if gr.b.Tried || gr.b.Random || gr.graded {
			continue
		}
		k, seen := byEnv[gr.b.Env]
		if !seen {
			k = d.newCorrection(gr.b.Env)
			byEnv[gr.b.Env] = k
		}
		start := gr.b.Start || !d.disp.Global.measured() // answered with the start of its group's size
		if start {
			ks, seen := starts[gr.n]
			if !seen {
				if c, ok := d.params.startCount(int(gr.n)); ok {
					ks = answerStart(c, d.params.Kappa)
				}
				starts[gr.n] = ks // the zero correction: none for this size
			}
			if ks.prior > 0 {
				k = ks
			}
		}
		mg := matchGroup(gr, k)
		mg.Start = start && d.shiftUntried // only the offset reads it
		obs = append(obs, mg)
	}
	if !d.shiftUntried {
		d.disp.NewFactor, d.disp.NewPending = matchPending(d.disp.NewFactor, d.disp.newFactor(), obs)
		return
	}
	if len(obs) < minFactorGroups {
		d.disp.NewPending = obs
		return
	}
	// the offset (Params.NewShift), then the factor on the groups with their means moved by
	// it; the groups answered with the start (the first request's, at ½ with nothing known),
	// whenever they come back, say nothing of the predictions' level and leave it as it is,
	// and the others move it only as many as the factor needs (review15: one group of 8
	// rollouts beside 7 of the first request's moved it a fifth of the way to its bound);
	// fewer, beside the first request's, measure the factor alone
	if level := answeredWithout(obs); len(level) >= minFactorGroups {
		d.disp.NewOffset = towardsOffset(d.disp.NewOffset, matchOffset(level))
	}
	if f, ok := matchFactor(shiftGroups(obs, d.disp.NewOffset)); ok {
		d.disp.NewFactor = towards(d.disp.newFactor(), f)
	}
	d.disp.NewPending = nil
}

// answeredWithout is the groups of obs not answered with the start (MatchGroup.Start).
func answeredWithout(obs []MatchGroup) []MatchGroup {
	var out []MatchGroup
	for _, g := range obs {
		if !g.Start {
			out = append(out, g)
		}
	}
	return out
}

// newOffsetMax bounds the never-tried offset (Params.NewShift), in logits.
const newOffsetMax = 2

// validOffset is x when it is a never-tried offset within its bounds, else 0 (none), as a
// state stored by another version may hold.
func validOffset(x float64) float64 {
	if !(x >= -newOffsetMax && x <= newOffsetMax) {
		return 0
	}
	return x
}

// matchOffset returns the logit offset, within ±newOffsetMax, under which the mean reward
// predicted for the groups (each group's mean moved by it in logits) equals the mean that
// came back, counting each group by its size; a mean outside what the bounds can predict
// gives the nearer bound. The predicted mean grows with the offset, so a bisection finds it.
func matchOffset(groups []MatchGroup) float64 {
	var k, n float64
	for _, g := range groups {
		k, n = k+float64(g.K), n+float64(g.N)
	}
	predicted := func(off float64) float64 {
		s := 0.0
		for _, g := range groups {
			s += float64(g.N) * sigmoid(logit(g.Mean)+off)
		}
		return s
	}
	lo, hi := -float64(newOffsetMax), float64(newOffsetMax)
	switch {
	case predicted(lo) >= k:
		return lo
	case predicted(hi) <= k:
		return hi
	}
	for range 40 {
		mid := (lo + hi) / 2
		if predicted(mid) < k {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// towardsOffset is prev moved a share factorRate of the way to off, within ±newOffsetMax.
func towardsOffset(prev, off float64) float64 {
	next := (1-factorRate)*validOffset(prev) + factorRate*off
	return min(max(next, -newOffsetMax), newOffsetMax)
}

// shiftGroups is groups with each mean moved by off in logits (groups itself when off is 0).
func shiftGroups(groups []MatchGroup, off float64) []MatchGroup {
	if off == 0 {
		return groups
	}
	out := slices.Clone(groups)
	for i := range out {
		out[i].Mean = sigmoid(logit(out[i].Mean) + off)
	}
	return out
}

// randomWindow is the number of random slots' groups that the random-slot factor is matched
// on (Params.RandomMatch): the last ones that came back.
const randomWindow = 32

// matchRandom sets the random-slot factor (Params.RandomMatch) to the one that the groups of
// the last randomWindow random slots of environments whose rewards are 0 or 1 measure
// (matchFactor), each as its answer gave it before the factor: under the correction Picker
// gave it, found from the likelihoods measured before this call's groups. It must run
// before they are added. Random slots are few a request (the share of random slots, 5% by
// default) and drawn whatever their prediction, so neither a rate like the other factors'
// nor a likelihood of their own shrunk towards selection's picks follows them in the first
// requests: the window is matched whole, and the factor is unset until minFactorGroups
// have come back.
func (d *drift) matchRandom(groups []group) {
	win := slices.Clone(d.disp.RandomWindow)
	added := false
	byEnv := map[string]correction{}
	starts := map[int64]correction{}
	for _, gr := range groups {
		if !gr.b.Random || gr.graded {
			continue
		}
		var k correction
		switch {
		case !gr.b.Tried && (gr.b.Start || !d.disp.Global.measured()): // the answer's start of its group's size
			ks, seen := starts[gr.n]
			if !seen {
				if c, ok := d.params.startCount(int(gr.n)); ok {
					ks = answerStart(c, d.params.Kappa)
				}
				starts[gr.n] = ks
			}
			k = ks
			if ks.prior == 0 { // no start for this size: as selection predicted it
				k = startCorrection(d.startScale)
			}
		case d.disp.Random.measured():
			ref := d.disp.Global
			if gr.b.Tried {
				ref = d.disp.Rechose
			}
			k = correctionOf(d.disp.Random, ref, d.prior, d.byMean, d.byCount)
		case gr.b.Tried:
			k = correctionOf(d.disp.Rechose, nil, 0, d.byMean, d.byCount)
		default:
			kk, seen := byEnv[gr.b.Env]
			if !seen {
				kk = d.newCorrection(gr.b.Env)
				byEnv[gr.b.Env] = kk
			}
			k = kk
		}
		win = append(win, matchGroup(gr, k))
		added = true
	}
	if len(win) > randomWindow {
		win = slices.Clone(win[len(win)-randomWindow:])
	}
	d.disp.RandomWindow = win
	if !added {
		return
	}
	if f, ok := matchFactor(win); ok {
		d.disp.RandomFactor = f
	}
}

// validWindow is the valid groups of a random-slot window, the last randomWindow (nil when
// none).
func validWindow(win []MatchGroup) []MatchGroup {
	var out []MatchGroup
	for _, g := range win {
		if g.valid() {
			out = append(out, g)
		}
	}
	if len(out) > randomWindow {
		out = out[len(out)-randomWindow:]
	}
	return out
}

// validPending is the valid groups of pending, at most minFactorGroups−1 (nil when none).
func validPending(pending []MatchGroup) []MatchGroup {
	var out []MatchGroup
	for _, g := range pending {
		if g.valid() && len(out) < minFactorGroups-1 {
			out = append(out, g)
		}
	}
	return out
}

// lowValue reports whether a re-chosen pick predicted with mean m and count n (under the
// re-chosen correction) is one selection takes when nothing informative is left: 4·E[p(1−p)],
// its exploitation value, below ½ (batcher's reason "best predicted variance left").
func lowValue(m, n float64) bool { return 4*m*(1-m)*n/(n+1) < 0.5 }

// MatchGroup is a group that measures a count factor: the mean and count predicted for its
// task under its channel's correction then, its size and its successes.
type MatchGroup struct {
	Mean  float64 `json:"mean"`
	Count float64 `json:"count"`
	N     int64   `json:"n"`
	K     int64   `json:"k"`
	// Start says the group's pick was answered with the start (Baseline.Start): it measures
	// the never-tried factor, not the offset.
	Start bool `json:"start,omitempty"`
}

// matchGroup is group gr as predicted under correction k.
func matchGroup(gr group, k correction) MatchGroup {
	m, n := k.apply(gr.b.Pred, gr.b.Count, gr.b.Centre)
	return MatchGroup{Mean: m, Count: n, N: gr.n, K: gr.k}
}

// valid reports whether g is a group matchFactor can use, as a state stored by another
// version may hold others.
func (g MatchGroup) valid() bool {
	return g.Mean > 0 && g.Mean < 1 && g.Count > 0 && finite(g.Count) && g.N >= 2 && g.N <= 1024 && g.K >= 0 && g.K <= g.N
}

// towards is prev moved a share factorRate of the way to f on the log scale, within the
// factor's bounds.
func towards(prev, f float64) float64 {
	next := math.Exp((1-factorRate)*math.Log(prev) + factorRate*math.Log(f))
	return min(max(next, factorMin), factorMax)
}

// matchFactor returns the factor f of the count, within [factorMin, factorMax], under which
// the mean chance of a degenerate group that each group's prediction with its count times f
// gives equals the share of them that came back degenerate (all successes or all
// failures); false with fewer than minFactorGroups groups. The chance falls as the count
// grows, so a bisection on log f finds it; a share outside what the bounds can predict
// gives the nearer bound.
func matchFactor(groups []MatchGroup) (float64, bool) {
	if len(groups) < minFactorGroups {
		return 0, false
	}
	var deg float64
	for _, gr := range groups {
		if gr.K == 0 || gr.K == gr.N {
			deg++
		}
	}
	realised := deg / float64(len(groups))
	predicted := func(lf float64) float64 {
		f, s := math.Exp(lf), 0.0
		for _, gr := range groups {
			c := gr.Count * f
			s += BetaBinomialDegenerate(gr.Mean*c, (1-gr.Mean)*c, int(gr.N))
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
