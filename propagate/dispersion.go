package propagate

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
)

// scaleGrid are the scales of a posterior's count that the dispersion correction chooses
// from: a scale s makes Beta(α, β) Beta(s·α, s·β), the same mean with the spread of s times
// the evidence. Below 1 the prediction was over-confident.
var scaleGrid = []float64{1.0 / 16, 1.0 / 11, 1.0 / 8, 1.0 / 5.6, 1.0 / 4, 1.0 / 2.8, 1.0 / 2, 1.0 / 1.4, 1, 1.4, 2, 2.8, 4}

// slopeGrid are the slopes of the mean the correction chooses from: a slope a moves a
// predicted mean m to sigmoid(c + a·(logit m − c)), c the logit of its environment's mean,
// so that below 1 the prediction's departures from its environment were too bold, above 1
// too timid.
var slopeGrid = []float64{0, 0.3, 0.5, 0.7, 1, 1.4}

// etaGrid are the exponents of the mean-dependence of the count the correction chooses
// from: an exponent η multiplies the count of a prediction of mean m by (4·m·(1−m))^(−η), 1
// at m = ½. A Beta of fixed count is far more spread, on the logit scale, near 0 or 1 than
// near ½ (the trigamma of a small shape parameter grows like its inverse square); η > 0 takes
// some of that back, so that a prediction far from ½ (a random pick, a task known easy) and
// one near ½ (the tasks selection prefers) can both be honest, which one scale cannot.
var etaGrid = []float64{0, 0.5, 1}

// thetaGrid are the powers of the count the correction chooses from: a power θ makes a count
// n countRef·(n/countRef)^θ before the scale, so that below 1 the counts of a channel are
// drawn together: the evidence that makes one prediction surer than another (borrowed from
// neighbours, decayed) was worth less than it says. Selection prefers the predictions with
// the most evidence behind them, so over-counted evidence shows in its picks and not in
// random ones; a scale alone corrects the one at the cost of the other.
var thetaGrid = []float64{1, 0.5}

// countRef is the count that θ leaves unchanged: the default prior strength, the count of a
// task with no evidence.
const countRef = 2

// correction is one point of the grid: a scale of the count, a slope of the mean, the
// exponent of the count's dependence on the mean and the power of the count. prior is 0 for
// the grid's; the answer's start's is the prior's strength κ, the part of a count its scale
// applies to (see answerStart).
type correction struct{ scale, slope, eta, theta, prior float64 }

// unitCorrection is the predictor without a correction.
var unitCorrection = correction{1, 1, 0, 1, 0}

// dispersionGrid is every (scale, slope, η, θ), scale-major; unitScale is the index of
// unitCorrection.
var dispersionGrid, unitScale = func() ([]correction, int) {
	var g []correction
	unit := 0
	for _, s := range scaleGrid {
		for _, a := range slopeGrid {
			for _, e := range etaGrid {
				for _, th := range thetaGrid {
					k := correction{s, a, e, th, 0}
					if k == unitCorrection {
						unit = len(g)
					}
					g = append(g, k)
				}
			}
		}
	}
	return g, unit
}()

// startCorrection is the correction of tasks never tried while nothing is measured (the
// first request of a database), in the predictions selection reads: the count scaled by start
// (Params.DispersionStart), nothing else changed.
func startCorrection(start float64) correction { return correction{start, 1, 0, 1, 0} }

// answerStart is the correction of the answer for a pick of a task never tried while nothing
// is measured (Params.StartDegenerate): the prior's part kappa of its count becomes the count
// c, the rest (evidence borrowed from neighbours: a folder of rollouts ingested before the
// first request) kept whole.
func answerStart(c, kappa float64) correction { return correction{c / kappa, 1, 0, 1, kappa} }

// apply gives the mean and count of a prediction of mean m and count n, its environment's
// centre logit c, under the correction.
func (k correction) apply(m, n, c float64) (float64, float64) {
	if k.slope != 1 {
		m = sigmoid(c + k.slope*(logit(m)-c))
	}
	m = min(max(m, 1e-4), 1-1e-4)
	if k.theta != 1 {
		n = countRef * math.Pow(n/countRef, k.theta)
	}
	if k.eta != 0 {
		n *= math.Pow(4*m*(1-m), -k.eta)
	}
	if k.prior > 0 && n > k.prior { // the start: the scale of the prior's part alone
		return m, n - k.prior*(1-k.scale)
	}
	return m, n * k.scale // the scale last, as groupLL applies it
}

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
	// Random measures the groups of random slots (Baseline.Random), tried or not, apart as
	// well: the channels' corrections are fitted mostly on picks that selection preferred,
	// random slots are drawn whatever their prediction (see Predictor.Pick).
	Random *Likelihood `json:"random,omitempty"`
	// RechosenFactor multiplies the count of the re-chosen correction for selection's picks
	// of tasks tried before (0: none measured): what makes the share of degenerate groups
	// predicted for them match the share that came back (see Params.DispersionMatch).
	RechosenFactor float64 `json:"rechosen_factor,omitempty"`
	// NewFactor multiplies the count of the prediction of a task never tried that selection
	// picked, in an environment whose rewards are 0 or 1 (0: none measured; see
	// Params.NewMatch).
	NewFactor float64 `json:"new_factor,omitempty"`
	// NewPending are the groups of such picks that came back, as predicted, while too few to
	// measure the factor (fewer than minFactorGroups): measured with the next ones.
	NewPending []MatchGroup `json:"new_pending,omitempty"`
	// NewOffset is the logit offset added to the mean of such a pick's answer before the
	// factor (0: none measured; see Params.NewShift), within ±newOffsetMax.
	NewOffset float64 `json:"new_offset,omitempty"`
	// LowFactor takes the place of RechosenFactor for selection's re-chosen picks predicted
	// to teach little (lowValue: the tasks picked as the best variance left), and LowPending
	// holds their groups while too few to measure it (see Params.LowMatch).
	LowFactor  float64      `json:"low_factor,omitempty"`
	LowPending []MatchGroup `json:"low_pending,omitempty"`
	// RandomFactor multiplies the count of a random slot's answer, in an environment whose
	// rewards are 0 or 1 (0: none measured), and RandomWindow holds the groups of the last
	// randomWindow such slots that came back, as answered before the factor: the factor is
	// the one under which the share of degenerate groups predicted for them equals the share
	// that came back (see Params.RandomMatch).
	RandomFactor float64      `json:"random_factor,omitempty"`
	RandomWindow []MatchGroup `json:"random_window,omitempty"`
	// NewSignal and ReSignal are the learning signal that groups of tasks never tried
	// (exploration) and of tasks tried before returned (see State.ExplorationReturn).
	NewSignal *Signal `json:"new_signal,omitempty"`
	ReSignal  *Signal `json:"re_signal,omitempty"`
	// RandSignal is the signal of the groups of random slots (Baseline.Random) of tasks never
	// tried, which NewSignal counts too (see State.RandomReturn).
	RandSignal *Signal `json:"random_signal,omitempty"`
	// CoverSignal and ExploitSignal count the groups of selection's re-tries of tasks rolled
	// out before, chosen mainly for coverage or not (Baseline.Cover): Sum the informative
	// (not all-equal) ones, N all (see State.CoverReturn).
	CoverSignal   *Signal `json:"cover_signal,omitempty"`
	ExploitSignal *Signal `json:"exploit_signal,omitempty"`
	// Trend is the re-chosen offset's fit as a function of the task (Params.RechosenTrend);
	// nil when it is off or nothing was measured yet.
	Trend *Trend `json:"trend,omitempty"`
	// Stuck is the calibration map of the chance of an all-equal group of tasks tried before
	// whose every group had been all-equal (Params.DispersionStuck), fitted like Trend; nil
	// when it is off or nothing was measured yet.
	Stuck *Trend `json:"stuck,omitempty"`
	// Extreme is the calibration map of the chance of an all-equal group of the other tasks
	// tried before with two or more groups (Params.DispersionExtreme), fitted like Stuck; nil
	// when it is off or nothing was measured yet.
	Extreme *Trend `json:"extreme,omitempty"`
	// Graded holds the graded calibration's maps (Params.GradedCal); nil when it is off or
	// no graded pick's group came back yet.
	Graded *GradedCal `json:"graded,omitempty"`
}

// Signal sums the realised signal of groups, 4·k(n−k)/(n(n−1)) for k successes of n (the
// unbiased within-group variance times 4: 1 for a fair coin, 0 for a degenerate group), and
// their number, decayed like the likelihoods.
type Signal struct {
	Sum float64 `json:"sum"`
	N   float64 `json:"n"`
}

func (s *Signal) add(k, n int64) {
	s.Sum += 4 * float64(k*(n-k)) / float64(n*(n-1))
	s.N++
}

func (s *Signal) mean() float64 { return s.Sum / s.N }

func (s *Signal) clone() *Signal {
	if s == nil || !finite(s.Sum) || !finite(s.N) || s.N < 0 || s.Sum < 0 {
		return nil
	}
	c := *s
	return &c
}

// minSignalGroups is the least number of (decayed) groups in each channel for
// ExplorationReturn to be measured.
const minSignalGroups = 32

// ExplorationReturn is what exploring has measurably returned: the mean learning signal of
// the groups of tasks never tried, over that of the tasks tried before, both as measured
// (with forgetting) from the groups that came back; 1 until each channel has
// minSignalGroups groups, at most 2. A caller weighs exploration by it (the scheduler and the
// simulator multiply the coverage weight of selection by it): where untried tasks return
// less than known ones, exploration is cut in proportion, where they return as much, it stays.
func (s State) ExplorationReturn() float64 {
	n, r := s.Dispersion.NewSignal, s.Dispersion.ReSignal
	if n == nil || r == nil || n.N < minSignalGroups || r.N < minSignalGroups || r.Sum <= 0 {
		return 1
	}
	return min(n.mean()/r.mean(), 2)
}

// RandomReturn is what random slots have measurably returned as a way to explore: the mean
// learning signal of the groups of random slots of tasks never tried over that of the other
// groups of tasks never tried (those the predictions chose), both measured like
// ExplorationReturn; 1 until each has minSignalGroups groups, and at most 1. A caller
// multiplies the share of random slots by it (batcher.Params.RandomReturn): random choice and
// the predictions' choice of untried tasks both explore, and where drawing at random returns
// less, it gets fewer slots in proportion. The configured share stays the most: on the
// simulator's tuning seeds, letting random slots grow where they returned more gave the
// real-catalog world more degenerate groups (36.5% against 35.9%), capping it fewer (35.7%).
func (s State) RandomReturn() float64 {
	d := s.Dispersion
	if d.RandSignal == nil || d.NewSignal == nil {
		return 1
	}
	rand := *d.RandSignal
	chosen := Signal{Sum: d.NewSignal.Sum - rand.Sum, N: d.NewSignal.N - rand.N}
	if rand.N < minSignalGroups || chosen.N < minSignalGroups || chosen.Sum <= 0 {
		return 1
	}
	return min(rand.mean()/chosen.mean(), 1)
}

// Likelihood is the Beta-Binomial log-likelihood of some groups for each scale of the grid
// (LL, in the grid's order) and their number (N), both decayed by Params.DispersionMemory at
// each call that measures.
type Likelihood struct {
	LL []float64
	N  float64
}

// clone returns a deep copy of d, so that a call never writes into its caller's State.
func (d Dispersion) clone() Dispersion {
	out := Dispersion{Global: d.Global.clone(), Rechose: d.Rechose.clone(), Random: d.Random.clone(),
		NewSignal: d.NewSignal.clone(), ReSignal: d.ReSignal.clone(), RandSignal: d.RandSignal.clone(),
		CoverSignal: d.CoverSignal.clone(), ExploitSignal: d.ExploitSignal.clone(),
		RechosenFactor: validFactor(d.RechosenFactor), NewFactor: validFactor(d.NewFactor), LowFactor: validFactor(d.LowFactor),
		RandomFactor: validFactor(d.RandomFactor), NewOffset: validOffset(d.NewOffset)}
	out.NewPending, out.LowPending = validPending(d.NewPending), validPending(d.LowPending)
	out.RandomWindow = validWindow(d.RandomWindow)
	if d.Trend != nil && d.Trend.valid() {
		tr := *d.Trend
		out.Trend = &tr
	}
	if d.Stuck != nil && d.Stuck.valid() {
		tr := *d.Stuck
		out.Stuck = &tr
	}
	if d.Extreme != nil && d.Extreme.valid() {
		tr := *d.Extreme
		out.Extreme = &tr
	}
	out.Graded = d.Graded.clone()
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

// clone copies l, each log-likelihood rounded to float32 (what MarshalJSON stores, so that a
// State that went through storage predicts exactly as one that did not); a Likelihood of the
// wrong length or with non-finite numbers is dropped (nil), as a state stored by another
// version would be.
func (l *Likelihood) clone() *Likelihood {
	if l == nil || len(l.LL) != len(dispersionGrid) || !finite(l.N) || l.N < 0 {
		return nil
	}
	out := &Likelihood{LL: make([]float64, len(l.LL)), N: l.N}
	for j, x := range l.LL {
		if !finite(x) || !finite(float64(float32(x))) {
			return nil
		}
		out.LL[j] = float64(float32(x))
	}
	return out
}

// round rounds every log-likelihood of d to float32, in place.
func (d Dispersion) round() {
	for _, l := range d.Env {
		l.round()
	}
	d.Global.round()
	d.Rechose.round()
	d.Random.round()
}

func (l *Likelihood) round() {
	if l == nil {
		return
	}
	for j, x := range l.LL {
		l.LL[j] = float64(float32(x))
	}
}

// likelihoodJSON is how a Likelihood is stored: its log-likelihoods as float32, little
// endian, in base64 (2.5 KB for the grid's 468, against about 9 KB as JSON numbers).
type likelihoodJSON struct {
	LL32 string  `json:"ll32"`
	N    float64 `json:"n"`
}

// MarshalJSON stores l compactly (see likelihoodJSON); the log-likelihoods lose what float32
// cannot hold, as clone does.
func (l Likelihood) MarshalJSON() ([]byte, error) {
	buf := make([]byte, 4*len(l.LL))
	for j, x := range l.LL {
		binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(float32(x)))
	}
	return json.Marshal(likelihoodJSON{LL32: base64.StdEncoding.EncodeToString(buf), N: l.N})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (l *Likelihood) UnmarshalJSON(data []byte) error {
	var v likelihoodJSON
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("dispersion likelihood: %w", err)
	}
	buf, err := base64.StdEncoding.DecodeString(v.LL32)
	if err != nil || len(buf)%4 != 0 {
		return fmt.Errorf("dispersion likelihood: bad ll32 (%d bytes, %v)", len(buf), err)
	}
	l.LL, l.N = make([]float64, len(buf)/4), v.N
	for j := range l.LL {
		l.LL[j] = float64(math.Float32frombits(binary.LittleEndian.Uint32(buf[4*j:])))
	}
	return nil
}

// add counts one group of n rollouts with k successes, predicted Beta(c·m, c·(1−m)) with
// (m, c) the mean and count under each correction of the grid, centre the logit of the
// environment's mean.
func (l *Likelihood) add(k, n int64, mean, count, centre float64) {
	ll := make([]float64, len(dispersionGrid))
	groupLL(ll, k, n, mean, count, centre)
	l.addLL(ll)
}

// addLL counts one group whose log-likelihood under each correction of the grid is ll (see
// groupLL).
func (l *Likelihood) addLL(ll []float64) {
	for j, v := range ll {
		l.LL[j] += v
	}
	l.N++
}

// groupLL sets out[j] to the log-likelihood of k successes of n under correction j of the
// grid, for a prediction of the given mean, count and centre: the logarithm of what
// groupRatios gives, bit for bit what betaBinomialLL gives for the correction's mean and count.
func groupLL(out []float64, k, n int64, mean, count, centre float64) {
	ratio := make([]float64, len(out))
	groupRatios(ratio, out, nil, k, n, mean, count, centre)
	for j, r := range ratio {
		if r != 1 {
			out[j] = math.Log(r)
		}
	}
}

// groupRatios sets, for each correction j of the grid, either ratio[j] to the likelihood of k
// successes of n (the number whose logarithm betaBinomialLL takes) and logs[j] to 0, or, where
// betaBinomialLL uses log-gammas or the likelihood is outside [2^−400, 2^400] (where products
// of two could leave float64's range), ratio[j] to 1 and logs[j] to the log-likelihood. So
// log(ratio[j]) + logs[j] is betaBinomialLL of correction j, bit for bit, and a caller that
// sums many groups can multiply the ratios and take one logarithm (see llSums). work is
// scratch space, grown when shorter than two numbers a correction.
//
// The grid is scale-major: the corrected mean and the count before the scale depend on the
// other parts alone, so they are worked out once for each, and within those the logit of the
// mean once, each slope's mean once and each power of the count once; every number is the one
// the grid's correction.apply gives.
func groupRatios(ratio, logs, work []float64, k, n int64, mean, count, centre float64) {
	var buf [256]float64
	means := scratch(buf[:0], len(slopeGrid))
	lg := logit(mean)
	for s, a := range slopeGrid {
		m := mean
		if a != 1 {
			m = sigmoid(centre + a*(lg-centre))
		}
		means[s] = min(max(m, 1e-4), 1-1e-4)
	}
	powered := scratch(buf[len(means):len(means)], len(thetaGrid))
	for t, th := range thetaGrid {
		powered[t] = count
		if th != 1 {
			powered[t] = countRef * math.Pow(count/countRef, th)
		}
	}
	inner := len(slopeGrid) * len(etaGrid) * len(thetaGrid)
	used := len(means) + len(powered)
	im := scratch(buf[used:used], inner)
	ic := scratch(buf[used+len(im):used+len(im)], inner)
	j := 0
	for s := range slopeGrid {
		m := means[s]
		for _, e := range etaGrid {
			f := 1.0
			if e != 0 {
				f = math.Pow(4*m*(1-m), -e)
			}
			for t := range thetaGrid {
				im[j], ic[j] = m, powered[t]
				if e != 0 {
					ic[j] *= f
				}
				j++
			}
		}
	}
	G := len(dispersionGrid)
	ab := scratch(work, 2*G)
	a, b := ab[:G], ab[G:2*G]
	for j, g := range dispersionGrid {
		m, c := im[j%inner], g.scale*ic[j%inner]
		a[j], b[j] = c*m, c*(1-m)
	}
	// the products of betaBinomialRatio, for every correction at once: the same factors in
	// the same order, with the corrections as the inner loop (independent multiplications,
	// not one chain)
	num, den := ratio[:G], logs[:G]
	if n <= 16 {
		for j := range num {
			num[j], den[j] = 1, 1
		}
		for t := range k {
			ft := float64(t)
			for j := range num {
				num[j] *= a[j] + ft
			}
		}
		for t := range n - k {
			ft := float64(t)
			for j := range num {
				num[j] *= b[j] + ft
			}
		}
		for t := range n {
			ft := float64(t)
			for j := range den {
				den[j] *= a[j] + b[j] + ft
			}
		}
	}
	for j := range num {
		if n > 16 || a[j]+b[j] >= 1e15 || !(a[j] > 0 && b[j] > 0) {
			ratio[j], logs[j] = 1, lbeta(float64(k)+a[j], float64(n-k)+b[j])-lbeta(a[j], b[j])
			continue
		}
		if r := num[j] / den[j]; r >= 0x1p-400 && r <= 0x1p400 {
			ratio[j], logs[j] = r, 0
		} else {
			ratio[j], logs[j] = 1, math.Log(r)
		}
	}
}

// scratch returns buf extended to n numbers, in buf's own array where it has room.
func scratch(buf []float64, n int) []float64 {
	if cap(buf) < n {
		return make([]float64, n)
	}
	return buf[:n]
}

// betaBinomialLL is lbeta(k+a, n−k+b) − lbeta(a, b), the log-likelihood of k successes of n
// under Beta(a, b) without the binomial coefficient. For the group sizes of training (n up to
// 16) it is the log of Π_{j<k}(a+j) Π_{j<n−k}(b+j) / Π_{j<n}(a+b+j): one logarithm instead
// of six log-gamma functions, and no cancellation between log-gammas of large arguments
// (the products stay far from overflow below a+b = 1e15, as in BetaBinomialDegenerate).
func betaBinomialLL(k, n int64, a, b float64) float64 {
	r, l, ok := betaBinomialRatio(k, n, a, b)
	if ok {
		return math.Log(r)
	}
	return l
}

// betaBinomialRatio is the likelihood of betaBinomialLL as the ratio of its products (ok), or,
// where betaBinomialLL uses log-gammas, their log-likelihood (not ok).
func betaBinomialRatio(k, n int64, a, b float64) (ratio, ll float64, ok bool) {
	if n > 16 || a+b >= 1e15 || !(a > 0 && b > 0) {
		return 0, lbeta(float64(k)+a, float64(n-k)+b) - lbeta(a, b), false
	}
	num, den := 1.0, 1.0
	for j := range k {
		num *= a + float64(j)
	}
	for j := range n - k {
		num *= b + float64(j)
	}
	for j := range n {
		den *= a + b + float64(j)
	}
	return num / den, 0, true
}

func (l *Likelihood) decay(rho float64) {
	for j := range l.LL {
		l.LL[j] *= rho
	}
	l.N *= rho
}

func lbeta(a, b float64) float64 {
	x, _ := math.Lgamma(a)
	y, _ := math.Lgamma(b)
	z, _ := math.Lgamma(a + b)
	return x + y - z
}

func newLikelihood() *Likelihood { return &Likelihood{LL: make([]float64, len(dispersionGrid))} }

// best is the index of the grid that maximises ll(j) + w·prior(j)/prior.N: an environment's
// own evidence shrunk towards the prior's per-group likelihood with the weight of w groups
// (empirical Bayes). Nil parts count nothing; with nothing at all, unit. Of points that tie,
// the one with the fewest parts away from unit (departures) wins, then unit, then the first
// in the grid's order: a part the groups cannot tell (the slope, η and θ of groups all
// predicted at their environment's mean, ½ and the count countRef, as the first request of a
// database predicts every task) stays neutral instead of taking the grid's first value (a
// slope of 0, which would answer every untried task with its environment's mean alone).
// Without byMean only the points of η 0 compete, without byCount only those of θ 1.
func best(ll, prior *Likelihood, w float64, unit int, byMean, byCount bool) int {
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
	for j, k := range dispersionGrid {
		if !byMean && k.eta != 0 || !byCount && k.theta != 1 {
			continue
		}
		v := score(j)
		if v > bv+1e-12 || v >= bv-1e-12 && departures(k) < departures(dispersionGrid[bj]) {
			bj, bv = j, max(v, bv)
		}
	}
	return bj
}

// departures counts the parts of k other than the scale that are away from unit: the slope,
// η and θ.
func departures(k correction) int {
	n := 0
	for _, away := range []bool{k.slope != 1, k.eta != 0, k.theta != 1} {
		if away {
			n++
		}
	}
	return n
}

// measured reports whether l holds any group.
func (l *Likelihood) measured() bool { return l != nil && l.N > 0 }

// correctionOf is the correction that ll, shrunk towards prior with the weight of w groups,
// chooses; with nothing measured in either, none (the unit of the grid).
func correctionOf(ll, prior *Likelihood, w float64, byMean, byCount bool) correction {
	return dispersionGrid[best(ll, prior, w, unitScale, byMean, byCount)]
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
