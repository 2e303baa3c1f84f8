package propagate

import (
	"math"
	"slices"
)

// dispersionGrid are the scales of a posterior's count that the dispersion correction
// chooses from: a scale s makes Beta(α, β) Beta(s·α, s·β), the
// same mean with the spread of s times the evidence. Below 1 the prior was over-confident.
var dispersionGrid = []float64{1.0 / 16, 1.0 / 11, 1.0 / 8, 1.0 / 5.6, 1.0 / 4, 1.0 / 2.8, 1.0 / 2, 1.0 / 1.4, 1, 1.4, 2, 2.8, 4}

// unitScale is the index of 1 in dispersionGrid: the scale chosen when nothing is measured.
const unitScale = 8

// Dispersion is what the dispersion correction has measured: for each channel, the
// log-likelihood of the groups that came back, summed (with forgetting) for every scale of
// the grid, and how many groups that is. Groups of tasks never rolled out measure their
// environment's scale (and a global one it is shrunk towards); groups of tasks rolled out
// before measure the re-chosen scale. It is part of the State, so it is a function of the
// stored answers and rollouts.
type Dispersion struct {
	Env     map[string]*Likelihood `json:"env,omitempty"`
	Global  *Likelihood            `json:"global,omitempty"`
	Rechose *Likelihood            `json:"rechosen,omitempty"`
}

// Likelihood is the Beta-Binomial log-likelihood of some groups for each scale of the grid
// (LL, in the grid's order) and their number (N), both decayed by Params.DispersionMemory at
// each call that measures.
type Likelihood struct {
	LL []float64 `json:"ll"`
	N  float64   `json:"n"`
}

// clone returns a deep copy of d, so that a call never writes into its caller's State.
func (d Dispersion) clone() Dispersion {
	out := Dispersion{Global: d.Global.clone(), Rechose: d.Rechose.clone()}
	if d.Env != nil {
		out.Env = make(map[string]*Likelihood, len(d.Env))
		for k, v := range d.Env {
			if c := v.clone(); c != nil {
				out.Env[k] = c
			}
		}
	}
	return out
}

// clone copies l; a Likelihood of the wrong length or with non-finite numbers is dropped
// (nil), as a state stored by another version would be.
func (l *Likelihood) clone() *Likelihood {
	if l == nil || len(l.LL) != len(dispersionGrid) || !finite(l.N) || l.N < 0 {
		return nil
	}
	for _, x := range l.LL {
		if !finite(x) {
			return nil
		}
	}
	return &Likelihood{LL: slices.Clone(l.LL), N: l.N}
}

// add counts one group of n rollouts with k successes, predicted Beta(s·count·m,
// s·count·(1−m)) for each scale s of the grid.
func (l *Likelihood) add(k, n int64, m, count float64) {
	for j, s := range dispersionGrid {
		a, b := s*count*m, s*count*(1-m)
		l.LL[j] += lbeta(float64(k)+a, float64(n-k)+b) - lbeta(a, b)
	}
	l.N++
}

func (l *Likelihood) decay(rho float64) {
	for j := range l.LL {
		l.LL[j] *= rho
	}
	l.N *= rho
}

func newLikelihood() *Likelihood { return &Likelihood{LL: make([]float64, len(dispersionGrid))} }

func lbeta(a, b float64) float64 {
	x, _ := math.Lgamma(a)
	y, _ := math.Lgamma(b)
	z, _ := math.Lgamma(a + b)
	return x + y - z
}

// best is the index of the grid that maximises ll(j) + w·prior(j)/prior.N: an environment's
// own evidence shrunk towards the prior's per-group likelihood with the weight of w groups
// (empirical Bayes). Nil parts count nothing; with nothing at all, or a tie, unit.
func best(ll, prior *Likelihood, w float64, unit int) int {
	score := func(j int) float64 {
		v := 0.0
		if ll != nil {
			v += ll.LL[j]
		}
		if prior != nil && prior.N > 0 {
			v += w * prior.LL[j] / prior.N
		}
		return v
	}
	bj, bv := unit, score(unit)
	for j := range dispersionGrid {
		if v := score(j); v > bv+1e-12 {
			bj, bv = j, v
		}
	}
	return bj
}

// scaleOf is the scale that ll, shrunk towards prior with the weight of w groups, chooses.
func scaleOf(ll, prior *Likelihood, w float64) float64 {
	return dispersionGrid[best(ll, prior, w, unitScale)]
}

// binaryGroup returns the successes of dn new rollouts whose rewards sum to sum, when every
// reward was 0 or 1 (the sum is a whole number) and the group is not absurdly large.
func binaryGroup(sum float64, dn int64) (int64, bool) {
	k := math.Round(sum)
	if dn < 2 || dn > 1024 || math.Abs(sum-k) > 1e-6 || k < 0 || k > float64(dn) {
		return 0, false
	}
	return int64(k), true
}
