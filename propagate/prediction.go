package propagate

import (
	"math"

	"github.com/envsched/envsched/internal/num"
)

// Prediction is what propagate knows of one node. Every number is finite.
type Prediction struct {
	// Alpha and Beta are the Beta posterior of the node's success probability: prior, own
	// and borrowed evidence, after the drift offset.
	Alpha, Beta float64
	// Mean is the expected reward, Alpha/(Alpha+Beta), in [0, 1].
	Mean float64
	// Var is the expected within-group variance of the reward, in [0, 0.25]: E[p(1−p)] for
	// 0/1 rewards; for continuous rewards it blends in the task's observed within-group
	// variance.
	Var float64
	// PDeg is the chance that a group of Params.GroupSize rollouts has all rewards equal.
	PDeg float64
	// SD is the posterior standard deviation of the success probability.
	SD float64
	// Own is the node's own decayed evidence, in rollouts.
	Own float64
	// Borrowed is the evidence taken from neighbours, in pseudo rollouts.
	Borrowed float64
	// Continuous is true when the node's rewards are not all 0 or 1; then PDeg and Var are
	// approximations (see PDegenerate).
	Continuous bool
	graded     bool   // the node's environment has graded rewards (some task's not all 0 or 1)
	preLogit   bool   // pre holds the logit of the mean after the offsets (see preMean)
	stuck      bool   // took the stuck channel's correction (Params.DispersionStuck)
	extreme    bool   // took the extreme channel's correction (Params.DispersionExtreme)
	age        uint16 // rounds from the node's evidence to the call, at most 65535 (0 untried)

	degShare, degGroups float32    // observed share of degenerate groups and their number
	varPrior            float32    // weight of the Beta-Binomial against degShare
	degOff              float32    // logit offset of the Beta-Binomial, graded environments (graded.go)
	cal                 [2]float32 // the graded calibration's map of the pick's channel (gradedcal.go)
	base                float64    // the mean before the drift offset: what drift is measured against
	count               float64    // Alpha+Beta before the dispersion correction
	pre                 float64    // the mean after the offsets, before the dispersion correction, or its logit
	centre              float64    // the logit of the environment's mean
}

// Graded is true when the node's rewards or those of another task of its environment are not
// all 0 or 1: then its mean does not tell how often its groups are all-equal (a task that
// always scores 0.5 has mean ½ and no spread), and PDegenerate carries the measurement of
// graded.go and gradedfit.go that the Beta-Binomial variance does not.
func (p Prediction) Graded() bool { return p.Continuous || p.graded }

// Count is the effective number of observations behind the prediction: prior, own and
// borrowed evidence.
func (p Prediction) Count() float64 { return p.Alpha + p.Beta }

// PDegenerate is the chance that a group of g rollouts has all rewards equal. For 0/1 rewards
// it is exact under the Beta-Binomial model. In an environment with graded rewards (some not
// 0 or 1) the Beta-Binomial value is shifted in logits by the environment's measured gap
// between observed and modelled all-equal groups (graded.go); for a task with graded rewards
// it is then blended with the task's observed share of degenerate groups (a task that always
// scores 0.5 is degenerate although its mean is 0.5), weighted by its number of groups against
// Params.VarPrior. A graded pick's chance is then moved by its channel's calibration map
// (gradedcal.go), when it has one.
func (p Prediction) PDegenerate(g int) float64 {
	return calibrate(p.uncalibrated(g), p.cal)
}

// uncalibrated is PDegenerate before the graded calibration's map.
func (p Prediction) uncalibrated(g int) float64 {
	bb := shiftDegenerate(BetaBinomialDegenerate(p.Alpha, p.Beta, g), float64(p.degOff))
	if !p.Continuous || p.degGroups == 0 {
		return bb
	}
	w, n := float64(p.varPrior), float64(p.degGroups)
	return clamp01((float64(p.degShare)*n + bb*w) / (n + w))
}

// GradedBase is what the graded calibration measures a pick answered with p against
// (Baseline.Graded): its chance of an all-equal group of g before the calibration's map,
// within 10⁻⁶ of 0 and 1; 0 for a task of an environment whose rewards are all 0 or 1 (or
// a group of one, always all-equal), which it does not measure.
func (p Prediction) GradedBase(g int) float64 {
	if !p.Graded() || g < 2 {
		return 0
	}
	return min(max(p.uncalibrated(g), 1e-6), 1-1e-6)
}

// BetaBinomialDegenerate is the exact chance that g draws of a Bernoulli whose probability is
// Beta(a, b) distributed are all equal: Π_{j<g}(a+j)/(a+b+j) + Π_{j<g}(b+j)/(a+b+j). It is 1
// for g <= 1.
func BetaBinomialDegenerate(a, b float64, g int) float64 {
	if g <= 1 {
		return 1
	}
	if g <= 16 && a+b < 1e15 {
		// One division instead of 2g: the products stay far from overflow, (1e15+16)^16 ≈ 1e240.
		na, nb, d := 1.0, 1.0, 1.0
		for j := range g {
			fj := float64(j)
			na *= a + fj
			nb *= b + fj
			d *= a + b + fj
		}
		return clamp01((na + nb) / d)
	}
	pa, pb := 1.0, 1.0
	for j := range g {
		fj := float64(j)
		d := a + b + fj
		pa *= (a + fj) / d
		pb *= (b + fj) / d
		if pa+pb < 1e-300 {
			break
		}
	}
	return clamp01(pa + pb)
}

// BetaVariance is E[p(1−p)] for p ~ Beta(a, b): ab/((a+b)(a+b+1)).
func BetaVariance(a, b float64) float64 {
	n := a + b
	return a * b / (n * (n + 1))
}

// betaSD is the standard deviation of Beta(a, b).
func betaSD(a, b float64) float64 {
	n := a + b
	return math.Sqrt(a * b / (n * n * (n + 1)))
}

func clamp01(x float64) float64 { return num.Clamp01(x) }

func logit(p float64) float64 {
	p = min(max(p, 1e-6), 1-1e-6)
	return math.Log(p / (1 - p))
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// minLogit and maxLogit are the bounds of what logit returns.
var minLogit, maxLogit = logit(0), logit(1)

// preMean is the mean after the drift offset and before the dispersion correction, the same
// number whether Predictor.adjust kept it or its logit: the shifted posterior's mean,
// rounded as the posterior m·count, (1−m)·count rounds it.
func (p *Prediction) preMean() float64 {
	if !p.preLogit {
		return p.pre
	}
	m := sigmoid(p.pre)
	a, b := m*p.count, (1-m)*p.count
	return a / (a + b)
}
