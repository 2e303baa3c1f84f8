package propagate

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/internal/par"
	"github.com/envsched/envsched/stats"
)

// State is the drift state one call of Predictor.Predict takes and the next one needs: the
// per-environment logit offsets, the re-chosen offset and the baselines the call measures
// drift against. Predict returns the next State (offsets moved by what it measured); the
// caller stores it, adds the baselines of the nodes whose rollouts the next call should
// measure (see Baselines) and hands it to that call. So the predictions are a function of the
// graph, the statistics and the State alone, whatever the process did before.
type State struct {
	// Offsets are the logit offsets by environment name (0 for an environment not named).
	Offsets map[string]float64
	// Rechosen is the logit offset of every node rolled out before (see Params.RechosenRate).
	Rechosen float64
	// Baseline is what the call measures drift against: the named nodes' statistics and
	// predicted means as of an earlier call. Nodes it does not name are not measured; nil
	// measures nothing.
	Baseline []Baseline
	// Nodes optionally hints the node of each baseline: Nodes[k], when it is a node of the
	// graph and that node is Baseline[k]'s task, is that baseline's node; a baseline without
	// such a hint is found by name. Hints save a search per baseline and never change the
	// predictions (nodes name tasks one to one). The returned State has none.
	Nodes []int
	// Dispersion is what the dispersion correction has measured (see
	// Params.DispersionMemory).
	Dispersion Dispersion
	// Warm is where the feature prior's fit starts (see WarmStart); the State a call returns
	// holds the call's own fit, for the next call to start from.
	Warm WarmStart
}

// Baseline is what the drift measurement of one node needs from the call before: the node's
// statistics then and the mean predicted for it before any offset.
type Baseline struct {
	Env      string  `json:"env"`
	Task     string  `json:"task"`
	Rollouts int64   `json:"rollouts"`
	Sum      float64 `json:"sum"`
	Mean     float64 `json:"mean"`
	// Tried says whether the task had been rolled out when Mean was predicted: its new
	// rollouts then measure the re-chosen offset, else its environment's. A caller that
	// brings Rollouts and Sum up to date keeps Tried and Mean.
	Tried bool `json:"tried,omitempty"`
	// Random says the task was a random slot of its answer (batcher.Pick.Random): its group
	// measures what random choice returns (State.RandomReturn). Baselines leaves it false;
	// the caller that knows the picks sets it.
	Random bool `json:"random,omitempty"`
	// Cover says the task was chosen mainly for coverage (batcher.Pick.ForCoverage): its
	// groups, when it had been rolled out before, measure what coverage-driven re-tries
	// return (State.CoverReturn). Baselines leaves it false; the caller that knows the picks
	// sets it.
	Cover bool `json:"cover,omitempty"`
	// Groups and Degenerate are the task's groups of two or more rollouts and, of those, the
	// all-equal ones, then: the groups that arrive after measure whether its re-try was
	// informative, whatever the rewards (0/1 or partial credit). A caller that brings
	// Rollouts and Sum up to date brings these up to date too.
	Groups     int64 `json:"groups,omitempty"`
	Degenerate int64 `json:"degenerate,omitempty"`
	// Pred, Count and Centre are the mean predicted for the task (after the offsets) and its
	// posterior's count, both before the dispersion correction, and the logit of its
	// environment's mean then: what the dispersion correction measures. 0 Count measures
	// nothing.
	Pred   float64 `json:"pred,omitempty"`
	Count  float64 `json:"count,omitempty"`
	Centre float64 `json:"centre,omitempty"`
	// Own is the mean of the task's decayed evidence then, shrunk by half a rollout each way
	// (0 for a task never tried), and Stale the rounds from its evidence to the call: what
	// the re-chosen trend measures (see Trend).
	Own   float64 `json:"own,omitempty"`
	Stale float64 `json:"stale,omitempty"`
	// Graded is, for a pick of an environment with graded rewards, the chance of an
	// all-equal group its answer gave before the graded calibration's map
	// (Prediction.GradedBase): the groups that arrive after measure its channel's map
	// (Params.GradedCal). 0 for other tasks, which measure none. Baselines leaves it 0; the
	// caller that knows the answer's predictions sets it.
	Graded float64 `json:"graded,omitempty"`
	// Start says the task, never tried, was answered while nothing was measured
	// (State.AtStart): its answer gave it the start of its group's size, and its groups,
	// whenever they come back, are matched as so answered and do not move the never-tried
	// offset (Params.NewShift). Baselines leaves it false; the caller that answered sets it.
	// A baseline stored without it (by an earlier version) is taken as answered with the
	// start when nothing is measured yet as its groups come back, as before.
	Start bool `json:"start,omitempty"`
}

// AtStart reports whether nothing is measured in s yet (no group of a never-tried pick has
// come back): an answer made from s gives never-tried picks the start of their group's size
// (see Baseline.Start).
func (s *State) AtStart() bool { return !s.Dispersion.Global.measured() }

// Baselines returns the baselines of the given nodes for a later call, from the statistics
// and predictions of the call that made preds (before the caller changed them); nodes nil
// means every node. A caller keeps typically those of the batch just chosen, whose rollouts
// the next call will see.
func Baselines(g *graph.Graph, tasks []stats.Task, preds []Prediction, nodes []int) []Baseline {
	one := func(i int) Baseline {
		nd := g.Nodes[i]
		b := Baseline{Env: g.Envs[nd.Env], Task: nd.Task, Rollouts: tasks[i].Rollouts, Sum: tasks[i].Sum,
			Mean: preds[i].base, Tried: tasks[i].Rollouts > 0, Pred: preds[i].preMean(), Count: preds[i].count, Centre: preds[i].centre,
			Groups: tasks[i].Groups, Degenerate: tasks[i].Degenerate}
		if b.Tried {
			b.Own, b.Stale = ownMean(&tasks[i]), float64(preds[i].age)
		}
		return b
	}
	if nodes == nil {
		out := make([]Baseline, len(tasks))
		for i := range tasks {
			out[i] = one(i)
		}
		return out
	}
	out := make([]Baseline, 0, len(nodes))
	for _, i := range nodes {
		out = append(out, one(i))
	}
	return out
}

// drift is the per-environment logit offset that follows a policy which moves faster than
// the decay forgets. Each call compares, per environment, the realised mean of the rollouts
// that arrived since the baseline with the mean predicted for their tasks then (before any
// offset), and moves the offset by DriftRate towards the logit of that gap. The offset is
// applied to each node in proportion to how stale its evidence is.
type drift struct {
	rate, maxOff float64
	minRollouts  int64
	// reRate, reMax and re are the re-chosen channel: one offset for the nodes rolled out
	// before (see Params.RechosenRate).
	reRate, reMax, re float64
	// trend is the re-chosen offset as a function of the task, on when trendMem > 0 (see
	// Params.RechosenTrend); groupSize is the G of its features.
	trend     Trend
	trendMem  float64
	groupSize int
	tables    trendTables // the trend's whole-number features for groupSize

	offset map[string]float64 // by environment name, so that it survives new graphs
	cur    []float64          // offset per environment index of the call in progress

	// dispersion correction: what was measured, its memory and prior weight (memory 0: off),
	// and the scales of the call in progress (per environment index, and re-chosen)
	disp          Dispersion
	memory, prior float64
	startScale    float64 // the scale of tasks never tried while nothing is measured
	params        Params  // for the answer's start of a group's size (Params.startCount)
	byMean        bool    // the count may depend on the predicted mean (η of the grid)
	byCount       bool    // the counts may be drawn together (θ of the grid)
	match         bool    // the re-chosen factor is measured (Params.DispersionMatch)
	matchUntried  bool    // the never-tried factor is measured (Params.NewMatch)
	shiftUntried  bool    // with the never-tried offset (Params.NewShift)
	matchLow      bool    // the low-value re-chosen factor is measured (Params.LowMatch)
	matchRand     bool    // the random-slot factor is measured (Params.RandomMatch)
	stuck         bool    // stuck tasks are a channel of their own (Params.DispersionStuck)
	extreme       bool    // re-tries of 2+ groups are a channel of their own (Params.DispersionExtreme)
	graded        bool    // graded picks' maps are measured (Params.GradedCal)
	scale         []correction
	scaleRe       correction
	// unit and unitRe say which of scale and scaleRe are the unit correction (no correction to
	// apply), worked out once a call instead of once a node
	unit        []bool
	unitRe      bool
	stuckOn     bool      // stuck is on and its map has measured enough (minStuckGroups)
	extremeOn   bool      // extreme is on and its map has measured enough (minStuckGroups)
	ratio, logs []float64 // groupsRatios' buffers, kept between calls
}

// start takes the State of a call: offsets clamped to ±DriftMax and the re-chosen offset to
// ±RechosenMax, NaN and infinities ignored; a channel that is off keeps no offset.
func (d *drift) start(st State, p Params) {
	d.rate, d.maxOff, d.minRollouts = p.DriftRate, p.DriftMax, int64(p.DriftMinRollouts)
	d.reRate, d.reMax = p.RechosenRate, p.RechosenMax
	d.offset = make(map[string]float64, len(st.Offsets))
	if d.rate > 0 {
		for env, off := range st.Offsets {
			if finite(off) {
				d.offset[env] = min(max(off, -d.maxOff), d.maxOff)
			}
		}
	}
	d.re = 0
	if d.reRate > 0 && finite(st.Rechosen) {
		d.re = min(max(st.Rechosen, -d.reMax), d.reMax)
	}
	d.trendMem, d.groupSize, d.trend = 0, p.GroupSize, Trend{}
	// the trend's tables, made before the passes on every CPU read them
	d.tables.tables(p.GroupSize)
	if d.reRate > 0 && p.RechosenTrend > 0 && p.DispersionMemory > 0 { // stored with the dispersion state
		d.trendMem = p.RechosenTrend
		if tr := st.Dispersion.Trend; tr != nil && tr.valid() {
			d.trend = *tr
		}
	}
	d.memory, d.prior, d.params = p.DispersionMemory, p.DispersionPrior, p
	d.startScale, d.byMean, d.byCount = p.DispersionStart, p.DispersionByMean, p.DispersionByCount
	d.match, d.matchUntried = p.DispersionMatch, p.NewMatch
	d.matchLow = p.DispersionMatch && p.LowMatch
	d.stuck = p.DispersionStuck && p.DispersionMemory > 0
	d.disp = Dispersion{}
	if d.memory > 0 {
		d.disp = st.Dispersion.clone()
	}
	if !d.stuck {
		d.disp.Stuck = nil // what an earlier run measured, kept only while measured
	}
	d.extreme = p.DispersionExtreme && p.DispersionMemory > 0
	if !d.extreme {
		d.disp.Extreme = nil // likewise
	}
	if !d.matchUntried {
		d.disp.NewFactor, d.disp.NewPending = 0, nil // as the stuck map
	}
	d.shiftUntried = d.matchUntried && p.NewShift
	if !d.shiftUntried {
		d.disp.NewOffset = 0
	}
	if !d.matchLow {
		d.disp.LowFactor, d.disp.LowPending = 0, nil
	}
	d.matchRand = p.RandomMatch && p.DispersionMemory > 0
	if !d.matchRand {
		d.disp.RandomFactor, d.disp.RandomWindow = 0, nil
	}
	d.graded = p.GradedCal && p.DispersionMemory > 0
	if !d.graded {
		d.disp.Graded = nil // likewise
	}
}

// state is the State after the call, without baselines (the caller chooses them).
// Its log-likelihoods are rounded to float32, as they are stored (see Likelihood.MarshalJSON),
// so that the State a caller keeps in memory equals the one it would read back.
func (d *drift) state() State {
	d.disp.round()
	d.disp.Trend = nil
	if d.trendMem > 0 && d.trend.N > 0 {
		tr := d.trend
		d.disp.Trend = &tr
	}
	return State{Offsets: d.offset, Rechosen: d.re, Dispersion: d.disp}
}

// active reports whether any channel corrects drift or dispersion.
func (d *drift) active() bool { return d.rate > 0 || d.reRate > 0 || d.memory > 0 }

// measure updates the offsets from the rollouts that arrived since base. With the re-chosen
// channel on, nodes rolled out when their baseline was taken measure it, and the others their
// environment's offset; with it off, every node measures its environment's.
func (d *drift) measure(g *graph.Graph, tasks []stats.Task, base []Baseline, hints []int) {
	defer d.current(g)
	if !d.active() || base == nil {
		return
	}
	realised := make([]float64, len(g.Envs))
	predicted := make([]float64, len(g.Envs))
	count := make([]int64, len(g.Envs))
	var reReal, rePred float64
	var reCount int64
	var groups []group
	var graded gradedEnvs
	var obs []trendObs
	var retries []retry
	var gradedObsOf [3][]trendObs // graded picks' groups by channel (Params.GradedCal)
	for _, nb := range baselineNodes(g, base, hints) {
		i, b := nb.node, nb.b
		nd := g.Nodes[i]
		if r, ok := retryOf(b, &tasks[i]); ok && d.memory > 0 {
			retries = append(retries, r)
		}
		if o, ok := gradedObs(b, &tasks[i]); ok && d.graded {
			k := gradedChannel(b.Tried, b.Random)
			gradedObsOf[k] = append(gradedObsOf[k], o)
		}
		if tasks[i].Rollouts <= b.Rollouts {
			continue
		}
		dn := tasks[i].Rollouts - b.Rollouts
		real, pred := tasks[i].Sum-b.Sum, float64(dn)*b.Mean
		if k, ok := binaryGroup(real, dn); ok && d.memory > 0 && b.Count > 0 && b.Pred > 0 && b.Pred < 1 {
			gr := group{b: b, k: k, n: dn}
			if d.matchUntried && !b.Tried && !b.Random || d.matchRand && b.Random {
				gr.graded = graded.of(g, tasks, nd.Env)
			}
			groups = append(groups, gr)
		}
		if d.trendMem > 0 && b.Tried && b.Own > 0 && b.Own < 1 && b.Mean > 0 && b.Mean < 1 {
			x := trendFeatures(b.Own, b.Mean, b.Rollouts, d.groupSize, b.Stale)
			obs = append(obs, trendObs{x: x, base: logit(b.Mean), k: real, n: float64(dn)})
		}
		if d.reRate > 0 && b.Tried {
			reReal, rePred, reCount = reReal+real, rePred+pred, reCount+dn
			continue
		}
		realised[nd.Env] += real
		predicted[nd.Env] += pred
		count[nd.Env] += dn
	}
	for e, name := range g.Envs {
		if d.rate > 0 && count[e] > 0 && count[e] >= d.minRollouts {
			d.update(name, realised[e], predicted[e], float64(count[e]))
		}
	}
	if d.reRate > 0 && reCount > 0 && reCount >= d.minRollouts {
		gap := logit((reReal+0.5)/(float64(reCount)+1)) - logit((rePred+0.5)/(float64(reCount)+1))
		d.re = min(max((1-d.reRate)*d.re+d.reRate*gap, -d.reMax), d.reMax)
	}
	if d.trendMem > 0 {
		d.trend = d.trend.fit(obs, d.trendMem)
	}
	d.measureDispersion(groups)
	d.measureRetries(retries)
	d.measureGraded(gradedObsOf)
}

// gradedEnvs tells, for the environments a call asks about, whether some task of theirs has
// graded rewards (not all 0 or 1) now, each found once by a pass over its tasks.
type gradedEnvs map[int32]bool

// of reports whether environment e of g has a task with graded rewards; tasks are indexed
// like g.Nodes, which are sorted by environment.
func (m *gradedEnvs) of(g *graph.Graph, tasks []stats.Task, e int32) bool {
	if v, ok := (*m)[e]; ok {
		return v
	}
	if *m == nil {
		*m = gradedEnvs{}
	}
	lo, _ := slices.BinarySearchFunc(g.Nodes, e, func(nd graph.Node, e int32) int { return cmp.Compare(nd.Env, e) })
	v := false
	for i := lo; i < len(g.Nodes) && g.Nodes[i].Env == e && !v; i++ {
		v = continuous(&tasks[i])
	}
	(*m)[e] = v
	return v
}

// nodeBaseline is a baseline and the node it names.
type nodeBaseline struct {
	node int
	b    Baseline
}

// baselineNodes returns the finite baselines of base with their nodes, in node order, the last
// of base for a node that it names twice; baselines of tasks not in g are left out. It takes
// each node from hints (State.Nodes) when the node there is the baseline's task, else finds it
// by binary search (g's nodes are sorted by environment, then task) and, should one not be
// found that way, by a pass over every node, so that a graph in another order gives the same.
func baselineNodes(g *graph.Graph, base []Baseline, hints []int) []nodeBaseline {
	// sorted by node, then by place in base (a stable sort by node, on small keys: moving the
	// baselines themselves about cost more than finding them)
	type key struct{ node, at int }
	keys := make([]key, 0, len(base))
	for at, x := range base {
		if !finite(x.Sum) || !finite(x.Mean) {
			continue
		}
		i, ok := hinted(g, x, hints, at)
		if !ok {
			i, ok = findNode(g, x.Env, x.Task)
		}
		if !ok {
			return baselineNodesByScan(g, base)
		}
		keys = append(keys, key{i, at})
	}
	slices.SortFunc(keys, func(x, y key) int {
		if c := cmp.Compare(x.node, y.node); c != 0 {
			return c
		}
		return cmp.Compare(x.at, y.at)
	})
	out := make([]nodeBaseline, 0, len(keys))
	for k, x := range keys {
		if k+1 < len(keys) && keys[k+1].node == x.node {
			continue // a later baseline of the same node wins
		}
		out = append(out, nodeBaseline{x.node, base[x.at]})
	}
	return out
}

// hinted returns hints[at] when it is a node of g whose task is x's.
func hinted(g *graph.Graph, x Baseline, hints []int, at int) (int, bool) {
	if at >= len(hints) {
		return 0, false
	}
	i := hints[at]
	if i < 0 || i >= len(g.Nodes) {
		return 0, false
	}
	nd := g.Nodes[i]
	return i, nd.Task == x.Task && g.Envs[nd.Env] == x.Env
}

// findNode returns the node of (env, task), by binary search over g's sorted nodes.
func findNode(g *graph.Graph, env, task string) (int, bool) {
	e, ok := slices.BinarySearch(g.Envs, env)
	if !ok {
		return 0, false
	}
	i, ok := slices.BinarySearchFunc(g.Nodes, graph.Node{Env: int32(e), Task: task}, func(a, b graph.Node) int {
		if c := cmp.Compare(a.Env, b.Env); c != 0 {
			return c
		}
		return strings.Compare(a.Task, b.Task)
	})
	return i, ok
}

// baselineNodesByScan is baselineNodes by a pass over every node.
func baselineNodesByScan(g *graph.Graph, base []Baseline) []nodeBaseline {
	pending := make(map[[2]string]Baseline, len(base))
	for _, x := range base {
		if finite(x.Sum) && finite(x.Mean) {
			pending[[2]string{x.Env, x.Task}] = x
		}
	}
	var out []nodeBaseline
	for i, nd := range g.Nodes {
		if b, ok := pending[[2]string{g.Envs[nd.Env], nd.Task}]; ok {
			out = append(out, nodeBaseline{i, b})
		}
	}
	return out
}

// group is one task's new rollouts since its baseline, all 0 or 1: k successes of n.
type group struct {
	b    Baseline
	k, n int64
	// graded says some task of b's environment has graded rewards (not all 0 or 1): the
	// never-tried and random-slot factors do not measure it (Params.NewMatch, RandomMatch).
	graded bool
}

// measureDispersion forgets a share 1 − DispersionMemory of what was measured before and
// adds the likelihood of groups, each in its channel.
func (d *drift) measureDispersion(groups []group) {
	if len(groups) == 0 {
		return
	}
	for _, l := range d.disp.Env {
		l.decay(d.memory)
	}
	for _, l := range []*Likelihood{d.disp.Global, d.disp.Rechose, d.disp.Random} {
		if l != nil {
			l.decay(d.memory)
		}
	}
	if d.disp.NewSignal == nil {
		d.disp.NewSignal = &Signal{}
	}
	if d.disp.ReSignal == nil {
		d.disp.ReSignal = &Signal{}
	}
	if d.disp.RandSignal == nil {
		d.disp.RandSignal = &Signal{}
	}
	for _, sg := range []*Signal{d.disp.NewSignal, d.disp.ReSignal, d.disp.RandSignal} {
		sg.Sum, sg.N = sg.Sum*d.memory, sg.N*d.memory
	}
	if d.match {
		d.matchRechosen(groups)
	}
	if d.matchUntried {
		d.matchNew(groups)
	}
	if d.matchRand {
		d.matchRandom(groups)
	}
	// the re-chosen correction the stuck groups were predicted with: measured before this
	// call's groups, as matchRechosen's
	reK := correctionOf(d.disp.Rechose, nil, 0, d.byMean, d.byCount)
	var stuck, extreme []trendObs
	d.ratio, d.logs = groupsRatios(groups, d.ratio, d.logs)
	G := len(dispersionGrid)
	sums := map[*Likelihood]*llSums{}
	add := func(l *Likelihood, i int) {
		s := sums[l]
		if s == nil {
			s = newLLSums()
			sums[l] = s
		}
		s.add(d.ratio[i*G:(i+1)*G], d.logs[i*G:(i+1)*G])
		l.N++
	}
	for i, gr := range groups {
		for _, l := range d.channel(gr.b) {
			add(l, i)
		}
		if gr.b.Random {
			if d.disp.Random == nil {
				d.disp.Random = newLikelihood()
			}
			add(d.disp.Random, i)
		}
		if d.stuck && stuckBaseline(gr.b) && !gr.b.Random {
			stuck = append(stuck, stuckObs(gr, reK))
		} else if d.extreme && extremeBaseline(gr.b, d.stuck) && !gr.b.Random {
			extreme = append(extreme, extremeObs(gr, reK))
		}
		if gr.b.Tried {
			d.disp.ReSignal.add(gr.k, gr.n)
		} else {
			d.disp.NewSignal.add(gr.k, gr.n)
		}
		if gr.b.Random && !gr.b.Tried {
			d.disp.RandSignal.add(gr.k, gr.n)
		}
	}
	for l, s := range sums { // each channel's sums are its own: the order of the map does not matter
		s.addTo(l.LL)
	}
	if len(stuck) > 0 {
		var tr Trend
		if d.disp.Stuck != nil {
			tr = *d.disp.Stuck
		}
		tr = tr.fitRidge(stuck, d.memory, stuckRidge)
		d.disp.Stuck = &tr
	}
	if len(extreme) > 0 {
		var tr Trend
		if d.disp.Extreme != nil {
			tr = *d.disp.Extreme
		}
		tr = tr.fitRidge(extreme, d.memory, extremeRidge*(1-d.memory))
		d.disp.Extreme = &tr
	}
}

// groupsRatios returns the likelihoods of every group under every correction of the grid
// (groupRatios: ratios, and log-likelihoods where a ratio is not used), group-major: worked
// out once per group whatever its channels, on every CPU, and multiplied and added up by the
// caller in the groups' order, so that the sums do not depend on the split.
// The slices are ratio and logs, grown as needed (they are overwritten, not read).
func groupsRatios(groups []group, ratio, logs []float64) ([]float64, []float64) {
	G := len(dispersionGrid)
	ratio, logs = resize(ratio, len(groups)*G), resize(logs, len(groups)*G)
	par.Ranges(len(groups), 64, func(lo, hi int) {
		work := make([]float64, 2*G)
		for i := lo; i < hi; i++ {
			b := groups[i].b
			groupRatios(ratio[i*G:(i+1)*G], logs[i*G:(i+1)*G], work, groups[i].k, groups[i].n, b.Pred, b.Count, b.Centre)
		}
	})
	return ratio, logs
}

// llSums sums the log-likelihoods of many groups under each correction of the grid with one
// logarithm per correction instead of one per group: for each correction the product of the
// groups' likelihood ratios, kept as a mantissa and a power of two so that it never leaves
// float64's range, and the sum of the log-likelihoods groupRatios gives instead of a ratio.
// The result is the sum of the groups' betaBinomialLL to within rounding (the product is the
// more accurate: one rounding a group of about 1e-16 of the product, against one a group of
// about 1e-16 of the growing sum).
type llSums struct {
	prod []float64
	exp  []int
	logs []float64
}

func newLLSums() *llSums {
	G := len(dispersionGrid)
	s := &llSums{prod: make([]float64, G), exp: make([]int, G), logs: make([]float64, G)}
	for j := range s.prod {
		s.prod[j] = 1
	}
	return s
}

// add counts one group (see groupRatios): every ratio is in [2^−400, 2^400], so a product
// kept within [2^−500, 2^500] stays a normal float64 after one more factor.
func (s *llSums) add(ratio, logs []float64) {
	for j, r := range ratio {
		p := s.prod[j] * r
		if p < 0x1p-500 || p > 0x1p500 {
			var e int
			p, e = math.Frexp(p)
			s.exp[j] += e
		}
		s.prod[j] = p
		s.logs[j] += logs[j]
	}
}

// addTo adds the sums to ll, one per correction of the grid.
func (s *llSums) addTo(ll []float64) {
	for j := range ll {
		ll[j] += s.logs[j] + (math.Log(s.prod[j]) + float64(s.exp[j])*math.Ln2)
	}
}

// channel returns the likelihoods a group of b's task measures, made when first needed.
func (d *drift) channel(b Baseline) []*Likelihood {
	if b.Tried {
		if d.disp.Rechose == nil {
			d.disp.Rechose = newLikelihood()
		}
		return []*Likelihood{d.disp.Rechose}
	}
	if d.disp.Env == nil {
		d.disp.Env = map[string]*Likelihood{}
	}
	if d.disp.Env[b.Env] == nil {
		d.disp.Env[b.Env] = newLikelihood()
	}
	if d.disp.Global == nil {
		d.disp.Global = newLikelihood()
	}
	return []*Likelihood{d.disp.Env[b.Env], d.disp.Global}
}

// current fills cur with the offsets of g's environments, and scale with their dispersion
// scales.
func (d *drift) current(g *graph.Graph) {
	d.cur = resize(d.cur, len(g.Envs))
	d.scale = resize(d.scale, len(g.Envs))
	d.unit = resize(d.unit, len(g.Envs))
	d.scaleRe = dispersionGrid[unitScale]
	if d.memory > 0 {
		d.scaleRe = correctionOf(d.disp.Rechose, nil, 0, d.byMean, d.byCount)
	}
	d.unitRe = d.scaleRe == dispersionGrid[unitScale]
	d.stuckOn = d.stuck && d.disp.Stuck != nil && d.disp.Stuck.N >= minStuckGroups
	d.extremeOn = d.extreme && d.disp.Extreme != nil && d.disp.Extreme.N >= minStuckGroups
	for e, name := range g.Envs {
		d.cur[e] = d.offset[name]
		d.scale[e] = dispersionGrid[unitScale]
		if d.memory > 0 {
			d.scale[e] = d.newCorrection(name)
		}
		d.unit[e] = d.scale[e] == dispersionGrid[unitScale]
	}
}

// newCorrection is the correction of the tasks never tried of environment env: the most
// likely of its groups shrunk towards all environments', or, while no environment has a group
// measured, the start correction.
func (d *drift) newCorrection(env string) correction {
	own := d.disp.Env[env]
	if !own.measured() && !d.disp.Global.measured() {
		return startCorrection(d.startScale)
	}
	return correctionOf(own, d.disp.Global, d.prior, d.byMean, d.byCount)
}

// correction is the dispersion correction of a node's channel: its environment's for a node
// never rolled out, the re-chosen one's for the others (see Predictor.adjust).
func (d *drift) correction(env int32, tried bool) correction {
	k, _ := d.correctionAt(env, tried)
	return *k
}

// correctionAt is correction in place, and whether it is the unit correction: the pass over
// every node reads the 40 bytes where they are instead of copying them (a copy it then read
// back stalled on every node: a sixth of the pass's time).
func (d *drift) correctionAt(env int32, tried bool) (*correction, bool) {
	if tried {
		return &d.scaleRe, d.unitRe
	}
	return &d.scale[env], d.unit[env]
}

// stuckTask reports whether a task is stuck: rolled out, with rewards all 0 or 1, in groups
// that were all all-equal (Params.DispersionStuck).
func stuckTask(t *stats.Task) bool {
	return t.Rollouts > 0 && t.Groups > 0 && t.Degenerate == t.Groups && !continuous(t)
}

// stuckBaseline reports whether the task of a baseline was stuck when it was chosen: tried,
// and every group counted then all-equal (its groups are measured only when all 0 or 1).
func stuckBaseline(b Baseline) bool {
	return b.Tried && b.Groups > 0 && b.Degenerate == b.Groups
}

func (d *drift) update(env string, realised, predicted, n float64) {
	gap := logit((realised+0.5)/(n+1)) - logit((predicted+0.5)/(n+1))
	off := (1-d.rate)*d.offset[env] + d.rate*gap
	d.offset[env] = min(max(off, -d.maxOff), d.maxOff)
}

// offsetOf is the logit offset of a node's channel: re, the node's re-chosen offset (see
// rechosenOffset), for a node rolled out before when that channel is on, else a share stale of its environment's offset (see
// Predictor.adjust).
func (d *drift) offsetOf(env int32, tried bool, stale, re float64) float64 {
	if d.reRate > 0 && tried {
		return re
	}
	return d.cur[env] * stale
}

// rechosenOffset is the re-chosen offset of a node rolled out before with statistics t, mean
// base before any offset and evidence age rounds old: when the trend is on, the trend's for
// the node blended with the one offset by how much the trend has measured (see trendPrior),
// else the one offset.
func (d *drift) rechosenOffset(t *stats.Task, base float64, age uint16) float64 {
	if !d.trendOn(t) {
		return d.re
	}
	return d.rechosenAt(t, logit(base), age)
}

// trendOn reports whether the re-chosen offset of a node with statistics t is the trend's.
func (d *drift) trendOn(t *stats.Task) bool {
	return d.trendMem != 0 && t.Rollouts != 0 && d.trend.N != 0
}

// rechosenAt is rechosenOffset for a node whose trend is on (trendOn) and whose mean before
// any offset has the logit lbase: the same number.
func (d *drift) rechosenAt(t *stats.Task, lbase float64, age uint16) float64 {
	w := d.trend.N / (d.trend.N + trendPrior)
	off := d.trend.offset(d.tables.features(ownMean(t), lbase, t.Rollouts, age), d.reMax)
	return w*off + (1-w)*d.re
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
