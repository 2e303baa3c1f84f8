package propagate

import (
	"fmt"
	"math"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/internal/par"
	"github.com/envsched/envsched/stats"
)

// Predictor computes predictions and keeps, between calls, its buffers (so that a call
// allocates little once the graph stops growing); the drift state is a value the caller
// hands to each call (see State). A Predictor is not safe for concurrent use.
type Predictor struct {
	p   Params
	out []Prediction

	own   []evidence // own decayed evidence per node
	both  []both     // with Params.Loads: own evidence and rollouts per node, for oneHop
	hop   []hop      // one-hop borrowed evidence per node
	loads []float64  // with Params.Loads: the neighbour load per node (see Loads)
	envs  []envSums
	pow   []float64 // pow[k] = λ^k
	drift drift
	// e^(−offset) of each environment and of the re-chosen channel, for this call (see expNeg)
	expEnv []float64
	expRe  float64
	prior  featurePrior
}

// evidence is a node's decayed successes and failures. float32 keeps the arrays that the
// edge passes read at random small enough for the cache.
type evidence struct{ a, b float32 }

// both is a node's own evidence as in own and its own decayed rollouts a + b in float64, side
// by side, so that a walk taking the borrowing and the neighbour loads together reads one
// 16-byte entry per neighbour, not two arrays.
type both struct {
	evidence
	n float64
}

// hop is what a node borrows over one hop, and inv = γ / max(total edge weight,
// MinTotalWeight), the factor that turns its edge weights into shares.
type hop struct{ a, b, inv, _ float32 } // 16 bytes: one cache line never splits an entry

// envSums are the per-environment sums of one call.
type envSums struct {
	a, n     float64    // decayed Σ successes and Σ rollouts over the environment's tasks
	wv, wb   float64    // continuous tasks: Σ observed within-group variance, Σ its Bernoulli bound
	cont     bool       // some task of the environment has continuous rewards
	varRatio float64    // observed within-group variance over its Bernoulli bound, in [0, 1]
	centre   float64    // the centre of the dispersion correction's slope (see centrePrior)
	graded   gradedSums // graded tasks' groups, for degOff
	degOff   float64    // logit offset of the chance of an all-equal group (see graded.go)
}

// centrePrior is the weight, in rollouts, of all environments' decayed mean in the centre of
// one environment: the logit of (a + ½ + centrePrior·m) / (n + 1 + centrePrior), a and n the
// environment's decayed successes and rollouts, m all environments' mean. The dispersion
// correction's slope pulls predictions towards this centre; an environment with one group
// of 0 successes had its centre at logit(1/18) on its own, which that slope then pulled
// its untried tasks towards (random slots of small environments in the first requests were
// predicted degenerate far more often than they were). Chosen on the simulator's tuning
// seeds 1000-1019 over all six scenarios (BENCHMARKS.md, "calib4").
const centrePrior = 16

// NewPredictor returns a Predictor with parameters p, or the error of p.Validate.
func NewPredictor(p Params) (*Predictor, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &Predictor{p: p}, nil
}

// Params returns the parameters of the Predictor.
func (pr *Predictor) Params() Params { return pr.p }

// SetGroupSize makes g the group size of the calls that follow (Params.GroupSize): the G of
// PDeg and of the re-chosen trend's feature log2(rollouts / G), in the fit and in the
// predictions. A caller that serves requests of a trainer sets the request's group size
// before each call, so that the trend measures training in the trainer's own groups. It
// fails, changing nothing, when g is outside 1 to 65536.
func (pr *Predictor) SetGroupSize(g int) error {
	p := pr.p
	p.GroupSize = g
	if err := p.Validate(); err != nil {
		return err
	}
	pr.p = p
	return nil
}

// Predict returns one prediction per node of g, for the scheduling round round. tasks[i] are
// the statistics of g.Nodes[i]. It runs one pass over the nodes and one or two over the
// edges: O(N + E). Edge weights are taken to be symmetric (the weight of i→j equals that of
// j→i), as the graph builder makes them.
//
// The package function predicts without drift state (no offsets, nothing measured); see
// Predictor.Predict for a call that takes and returns it.
func Predict(g *graph.Graph, tasks []stats.Task, round int64, p Params) ([]Prediction, error) {
	pr, err := NewPredictor(p)
	if err != nil {
		return nil, err
	}
	preds, _, err := pr.Predict(g, tasks, round, State{})
	return preds, err
}

// Predict returns one prediction per node of g (see the package function Predict) and the
// drift state after it: st's offsets, moved by what the rollouts that arrived since
// st.Baseline measured (see Params.DriftRate and RechosenRate), and no baselines. The
// predictions are a function of g, tasks, round and st alone. The returned slice belongs to
// the Predictor and is overwritten by the next call; copy what must outlive it. The returned
// State's map is the caller's. It fails only when tasks is not indexed like g.Nodes.
func (pr *Predictor) Predict(g *graph.Graph, tasks []stats.Task, round int64, st State) ([]Prediction, State, error) {
	n := g.Len()
	if len(tasks) != n {
		return nil, State{}, fmt.Errorf("predict: %d task statistics for %d graph nodes", len(tasks), n)
	}
	pr.grow(n, len(g.Envs))
	pr.drift.start(st, pr.p)
	pr.drift.measure(g, tasks, st.Baseline, st.Nodes)
	pr.expOffsets()
	pr.prior.start, pr.prior.total = st.Warm, rolloutsOf(tasks)
	pr.prior.kept = pr.prior.keeps(g, pr.p.PriorRefit)
	pr.prior.collected = pr.prior.fits(g, pr.p.FeatureRidge) && !pr.prior.kept
	pr.ownEvidence(g, tasks, round)
	pr.envPriors()
	pr.prior.fit(g, tasks, pr.own, pr.p.FeatureRidge)
	if pr.p.Hops > 0 && pr.p.Gamma > 0 || pr.p.Loads {
		parallelNodes(n, func(lo, hi int) { pr.oneHop(g, lo, hi) })
	}
	parallelNodes(n, func(lo, hi int) { pr.finish(g, tasks, round, lo, hi) })
	if pr.p.GradedFit {
		pr.fitGraded(g, tasks, round)
	}
	if pr.p.GradedCalSelect {
		pr.calibrateGraded(tasks)
	}
	next := pr.drift.state()
	next.Warm = pr.prior.solution()
	return pr.out, next, nil
}

// rolloutsOf is the number of rollouts counted over every task: summed in pieces of chunk
// tasks on every CPU (a walk over every task's statistics, 10 MB at 100,000 tasks, that ran
// alone before the passes), the pieces then added up; integers, so the order changes nothing.
func rolloutsOf(tasks []stats.Task) int64 {
	sums := make([]int64, (len(tasks)+chunk-1)/chunk)
	par.Ranges(len(sums), 2, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			var n int64
			for i := c * chunk; i < min(len(tasks), (c+1)*chunk); i++ {
				n += tasks[i].Rollouts
			}
			sums[c] = n
		}
	})
	var n int64
	for _, s := range sums {
		n += s
	}
	return n
}

// parallelNodes is par.Ranges for a pass over n nodes: small graphs are not worth a goroutine.
func parallelNodes(n int, f func(lo, hi int)) {
	if n < 1<<15 {
		f(0, n)
		return
	}
	par.Ranges(n, 4, f)
}

func (pr *Predictor) grow(n, envs int) {
	pr.out = resize(pr.out, n)
	pr.own = resize(pr.own, n)
	pr.hop = resize(pr.hop, n)
	if pr.p.Loads {
		pr.both, pr.loads = resize(pr.both, n), resize(pr.loads, n)
	}
	pr.envs = append(pr.envs[:0], make([]envSums, envs)...)
	if len(pr.pow) == 0 {
		pr.pow = make([]float64, 1024)
		for k := range pr.pow {
			pr.pow[k] = math.Pow(pr.p.Decay, float64(k))
		}
	}
}

// decay is λ^(round − from), 1 when from is not before round.
func (pr *Predictor) decay(from, round int64) float64 {
	k := round - from
	switch {
	case k <= 0:
		return 1
	case k < int64(len(pr.pow)):
		return pr.pow[k]
	}
	return math.Pow(pr.p.Decay, float64(k))
}

// chunk is the number of nodes whose environment sums ownEvidence adds up in one piece: the
// pieces are fixed, and merged in order, so the sums do not depend on the number of CPUs.
const chunk = 1 << 14

// ownEvidence fills own with each node's decayed evidence and sums it per environment. When
// the feature prior will fit (prior.collected), it also collects the rows of the fit in the
// prior's pieces, in the same pass over every task's statistics (see featurePrior.collectRows).
func (pr *Predictor) ownEvidence(g *graph.Graph, tasks []stats.Task, round int64) {
	n := len(tasks)
	parts := make([][]envSums, (n+chunk-1)/chunk)
	if pr.prior.collected {
		pr.prior.growPieces(len(parts))
	}
	par.Ranges(len(parts), 4, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			parts[c] = pr.ownChunk(g, tasks, round, c*chunk, min(n, (c+1)*chunk))
			if pr.prior.collected {
				pr.prior.collectPiece(c, tasks, pr.own)
			}
		}
	})
	for c, part := range parts {
		first := int(g.Nodes[c*chunk].Env)
		for k := range part {
			pr.envs[first+k].add(&part[k])
		}
	}
}

// ownChunk does ownEvidence for nodes lo to hi, returning the sums of the environments from
// that of node lo to that of node hi−1 (nodes are sorted by environment).
func (pr *Predictor) ownChunk(g *graph.Graph, tasks []stats.Task, round int64, lo, hi int) []envSums {
	first := g.Nodes[lo].Env
	sums := make([]envSums, g.Nodes[hi-1].Env-first+1)
	for i := lo; i < hi; i++ {
		t := &tasks[i]
		f := pr.decay(t.Round, round)
		a, b := t.A*f, t.B*f
		pr.own[i] = evidence{float32(a), float32(b)}
		if pr.both != nil {
			pr.both[i] = both{pr.own[i], a + b}
		}
		e := &sums[g.Nodes[i].Env-first]
		e.graded.addTask(t)
		e.a += a
		e.n += a + b
		if continuous(t) {
			e.cont = true
			if a+b > 0 {
				e.wv += t.WV * f
				e.wb += t.WN * f * a * b / ((a + b) * (a + b))
			}
		}
	}
	return sums
}

func (s *envSums) add(o *envSums) {
	s.a += o.a
	s.n += o.n
	s.wv += o.wv
	s.wb += o.wb
	s.cont = s.cont || o.cont
	s.graded.add(&o.graded)
}

// continuous reports whether a task has seen a reward strictly between 0 and 1: for rewards in
// [0, 1], Σr − Σr² = Σ r(1−r) is zero exactly when every reward is 0 or 1.
func continuous(t *stats.Task) bool {
	return t.Rollouts > 0 && t.Sum-t.SumSq > 1e-9*float64(t.Rollouts)
}

func (pr *Predictor) envPriors() {
	var ga, gn float64
	for e := range pr.envs {
		ga, gn = ga+pr.envs[e].a, gn+pr.envs[e].n
	}
	all := (ga + 0.5) / (gn + 1)
	for e := range pr.envs {
		s := &pr.envs[e]
		s.centre = logit((s.a + 0.5 + centrePrior*all) / (s.n + 1 + centrePrior))
		s.varRatio = 1
		if s.wb > 1e-12 {
			s.varRatio = clamp01(s.wv / s.wb)
		}
		s.degOff = s.graded.offset(pr.p.VarPrior)
	}
}

// oneHop fills hop[lo:hi] with the evidence each node borrows from its direct neighbours, and,
// with Params.Loads, loads[lo:hi] with their neighbour loads: one walk over the edges for
// both. It is a pass of its own, not a part of finish: a tight walk keeps many of its random
// reads in flight at once, which the arithmetic of finish between walks would not.
func (pr *Predictor) oneHop(g *graph.Graph, lo, hi int) {
	for i := lo; i < hi; i++ {
		pr.hop[i] = pr.neighbours(g, i)
	}
}

// neighbours returns what node i borrows from its direct neighbours over one hop, and, with
// Params.Loads, sets loads[i] in the same walk over its edges.
func (pr *Predictor) neighbours(g *graph.Graph, i int) hop {
	var w, sa, sb float64
	var sum, ws float64 // the load's
	if pr.loads != nil {
		for _, e := range g.Neighbors(i) {
			ew, sim := float64(e.Weight), float64(e.Sim)
			o := &pr.both[e.To]
			w += ew
			sa += ew * float64(o.a)
			sb += ew * float64(o.b)
			sum += sim * o.n
			ws += sim
		}
		pr.loads[i] = 0
		if ws != 0 {
			pr.loads[i] = sum / ws
		}
	} else {
		for _, e := range g.Neighbors(i) {
			ew := float64(e.Weight)
			o := pr.own[e.To]
			w += ew
			sa += ew * float64(o.a)
			sb += ew * float64(o.b)
		}
	}
	inv := pr.p.Gamma / max(w, pr.p.MinTotalWeight)
	return hop{a: float32(sa * inv), b: float32(sb * inv), inv: float32(inv)}
}

// Loads returns the neighbour load of every node as of the last call to Predict, indexed like
// the graph's nodes, or nil unless Params.Loads is set: the similarity-weighted mean of its
// neighbours' own decayed rollouts (Prediction.Own), Σ sim·own / Σ sim over its edges in
// order, 0 with no similarity, the same bits as batcher's transfer factor works it out from
// the predictions. The slice belongs to the Predictor and is overwritten by the next call.
func (pr *Predictor) Loads() []float64 {
	if !pr.p.Loads {
		return nil
	}
	return pr.loads
}

// borrowed returns the evidence node i borrows over one or two hops, without echo: the
// two-hop paths i→j→i carry i's own evidence back, and are subtracted.
func (pr *Predictor) borrowed(g *graph.Graph, i int) (ba, bb float64) {
	if pr.p.Hops == 0 || pr.p.Gamma == 0 {
		return 0, 0
	}
	h := pr.hop[i]
	ba, bb = float64(h.a), float64(h.b)
	if pr.p.Hops == 2 {
		var sa, sb, echo float64
		for _, e := range g.Neighbors(i) {
			ew := float64(e.Weight)
			o := pr.hop[e.To]
			sa += ew * float64(o.a)
			sb += ew * float64(o.b)
			echo += ew * ew * float64(o.inv)
		}
		inv, own := float64(h.inv), pr.own[i]
		ba += max(0, inv*(sa-echo*float64(own.a)))
		bb += max(0, inv*(sb-echo*float64(own.b)))
	}
	if c := ba + bb; c > pr.p.BorrowCap {
		f := pr.p.BorrowCap / c
		ba, bb = ba*f, bb*f
	}
	return ba, bb
}

// finish combines prior, own and borrowed evidence and the drift offset into the predictions
// of nodes lo to hi.
func (pr *Predictor) finish(g *graph.Graph, tasks []stats.Task, round int64, lo, hi int) {
	for i := lo; i < hi; i++ {
		t := &tasks[i]
		env := g.Nodes[i].Env
		f := pr.decay(t.Round, round)
		a, b := t.A*f, t.B*f
		ba, bb := pr.borrowed(g, i)
		alpha, beta := pr.posterior(i, env, a, b, ba, bb)
		base, count, centre := alpha/(alpha+beta), alpha+beta, pr.envs[env].centre
		if pr.p.DriftCentre && t.Rollouts == 0 {
			centre += pr.drift.cur[env] // the environment's level after its drift offset (Params.DriftCentre)
		}
		age := evidenceAge(t, round)
		re, lbase := pr.drift.re, math.NaN() // lbase: logit(base) once worked out, for adjust too
		if pr.drift.trendOn(t) {
			lbase = logit(base)
			re = pr.drift.rechosenAt(t, lbase, age)
		}
		alpha, beta, pre, lazy := pr.adjust(env, alpha, beta, base, lbase, centre, t.Rollouts > 0, stale(t, f), re)
		stuck := pr.drift.stuckOn && stuckTask(t)
		if stuck {
			m, g := alpha/(alpha+beta), pr.p.GroupSize
			want := pr.drift.disp.Stuck.stuckChance(BetaBinomialDegenerate(alpha, beta, g), float64(age), t.Groups)
			c := countFor(m, g, want)
			alpha, beta = m*c, (1-m)*c
		}
		extreme := !stuck && pr.drift.extremeOn && extremeTask(t, pr.drift.stuck)
		if extreme {
			m, g := alpha/(alpha+beta), pr.p.GroupSize
			want := pr.drift.disp.Extreme.stuckChance(BetaBinomialDegenerate(alpha, beta, g), float64(age), t.Groups)
			c := countFor(m, g, want)
			alpha, beta = m*c, (1-m)*c
		}
		o := &pr.out[i]
		pr.prediction(o, t, env, alpha, beta, f)
		o.age, o.stuck, o.extreme = age, stuck, extreme
		o.Own, o.Borrowed, o.base, o.count, o.pre, o.preLogit, o.centre = a+b, ba+bb, base, count, pre, lazy, centre
	}
}

// adjust moves a posterior (alpha, beta) of mean base (whose logit is lbase, or NaN when not
// worked out yet) by its channel's drift offset on the
// logit scale, keeping its count, then corrects it by its channel's dispersion correction
// about the environment's centre logit. It returns the new posterior and pre, the mean
// after the offset and before the correction, or, when lazy, the logit of that mean (see
// Prediction.preMean: only the chosen nodes' baselines need it).
//
// The offset alone is applied as α / (α + β·e^(−off)), which equals the sigmoid of the shifted
// logit but for rounding, and needs no logarithm (nor, for a node never rolled out or in the
// re-chosen channel, an exponential); where logit would clamp the mean it is the sigmoid of
// the clamped logit, as before. When an offset and a slope both apply, the slope acts on the
// shifted logit itself instead of the logit of the shifted mean (one sigmoid and one
// logarithm fewer per node; the two differ by rounding only, the logit clamped as logit
// clamps), the rest of the correction as correction.apply does it, on the count before the
// shift's rounding. Without an offset it
// computes exactly as the correction did.
func (pr *Predictor) adjust(env int32, alpha, beta, base, lbase, centre float64, tried bool, stale, re float64) (a, b, pre float64, lazy bool) {
	off := pr.drift.offsetOf(env, tried, stale, re)
	k, unit := pr.drift.correctionAt(env, tried)
	n := alpha + beta
	if off != 0 && k.slope != 1 {
		if math.IsNaN(lbase) {
			lbase = logit(base)
		}
		l := lbase + off
		m := sigmoid(centre + k.slope*(min(max(l, minLogit), maxLogit)-centre))
		flat := *k // the slope is applied: the rest of the correction (clamp, count) as apply does it
		flat.slope = 1
		m, n = flat.apply(m, n, centre)
		return m * n, (1 - m) * n, l, true
	}
	if off != 0 {
		var m float64
		if base >= 1e-6 && base <= 1-1e-6 { // where logit does not clamp
			// sigmoid(logit(α/n) + off) = α / (α + β·e^(−off)), without the logarithm
			m = alpha / (alpha + beta*pr.expNeg(env, tried, stale, off))
		} else {
			m = sigmoid(logit(base) + off)
		}
		alpha, beta = m*n, (1-m)*n
	}
	pre = alpha / (alpha + beta)
	if !unit {
		m, kn := k.apply(pre, alpha+beta, centre)
		alpha, beta = m*kn, (1-m)*kn
	}
	return alpha, beta, pre, false
}

// expNeg is e^(−off) for the offset off of a node's channel: kept per call for the re-chosen
// offset and each environment's whole offset (a node never rolled out), worked out for a
// share of it.
func (pr *Predictor) expNeg(env int32, tried bool, stale, off float64) float64 {
	switch {
	case pr.drift.reRate > 0 && tried && pr.drift.trendMem > 0:
		return math.Exp(-off) // each node's own offset
	case pr.drift.reRate > 0 && tried:
		return pr.expRe
	case stale == 1:
		return pr.expEnv[env]
	}
	return math.Exp(-off)
}

// expOffsets keeps e^(−offset) of the re-chosen channel and of each environment for expNeg.
func (pr *Predictor) expOffsets() {
	pr.expEnv = resize(pr.expEnv, len(pr.drift.cur))
	for e, off := range pr.drift.cur {
		pr.expEnv[e] = math.Exp(-off)
	}
	pr.expRe = math.Exp(-pr.drift.re)
}

// posterior is the prior plus own and borrowed evidence. The prior mean is the feature
// prior's fit when the graph carries features, else the environment's mean leaving out the
// node's own evidence, so that it does not count twice.
func (pr *Predictor) posterior(i int, env int32, a, b, ba, bb float64) (alpha, beta float64) {
	var m float64
	if pr.prior.ok {
		m = pr.prior.mean[i]
	} else {
		s := &pr.envs[env]
		m = (s.a - a + 0.5) / (s.n - a - b + 1)
	}
	m = min(max(m, 1e-3), 1-1e-3)
	k := pr.p.Kappa
	return k*m + a + ba, k*(1-m) + b + bb
}

// evidenceAge is the number of rounds from a node's evidence to round, within 0 to 65535;
// 0 for a node never rolled out.
func evidenceAge(t *stats.Task, round int64) uint16 {
	if t.Rollouts == 0 {
		return 0
	}
	return uint16(min(max(round-t.Round, 0), math.MaxUint16))
}

// stale is the share of a node's prediction that does not come from its fresh evidence: 1 for
// a node never rolled out, 1 − λ^(rounds since its evidence) (1 − decay) otherwise.
func stale(t *stats.Task, decay float64) float64 {
	if t.Rollouts == 0 {
		return 1
	}
	return 1 - decay
}

// prediction sets p to the numbers of a posterior (every field: those it does not derive are
// zeroed); f is the decay of the task's evidence. It writes in place, not a value the caller
// copies: the pass over every node writes 112 bytes a node.
func (pr *Predictor) prediction(p *Prediction, t *stats.Task, env int32, alpha, beta, f float64) {
	s := &pr.envs[env]
	bv := BetaVariance(alpha, beta)
	*p = Prediction{Alpha: alpha, Beta: beta, Mean: alpha / (alpha + beta), Var: bv}
	if !pr.p.Lean {
		p.SD = betaSD(alpha, beta)
	}
	switch {
	case continuous(t):
		wv, wn, w := t.WV*f, t.WN*f, pr.p.VarPrior
		p.Var = (wv + w*s.varRatio*bv) / (wn + w)
		p.Continuous = true
		p.varPrior = float32(w)
		if t.Groups > 0 {
			p.degShare, p.degGroups = float32(float64(t.Degenerate)/float64(t.Groups)), float32(t.Groups)
		}
	case t.Rollouts == 0 && s.cont:
		p.Var = s.varRatio * bv
	}
	if s.cont {
		p.degOff = float32(taskOffset(s.degOff, t))
		p.graded = true
	}
	p.Var = min(clamp01(p.Var), 0.25)
	if !pr.p.Lean {
		p.PDeg = p.PDegenerate(pr.p.GroupSize)
	}
}
