package propagate

import (
	"cmp"
	"maps"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

// drift is the per-environment logit offset that follows a policy which moves faster than
// the decay forgets. Between two calls it compares, per environment, the realised mean of the
// rollouts that arrived with the mean the previous call predicted for their tasks (before
// any offset), and moves the offset by DriftRate towards the logit of that gap. The offset is
// applied to each node in proportion to how stale its evidence is.
type drift struct {
	rate, maxOff float64
	minRollouts  int64
	// reRate, reMax and re are the re-chosen channel: one offset for the nodes rolled out
	// before (see Params.RechosenRate).
	reRate, reMax, re float64

	offset map[string]float64 // by environment name, so that it survives new graphs
	cur    []float64          // offset per environment index of the call in progress
	prev   []int              // buffer of align

	g        *graph.Graph // the graph of the previous call; nil before the first
	rollouts []int64      // per node of g: Rollouts at the previous call
	sum      []float64    // per node of g: Sum at the previous call
	baseMean []float64    // per node of g: the predicted mean before the offset
	next     []float64    // baseMean of the call in progress

	// pending are baselines by node name, given by SetBaseline for the next call; nil when
	// that call measures against the previous one
	pending map[[2]string]Baseline
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
}

// Baseline returns the baselines of the given nodes of the graph of the last call, so that a
// caller can keep them across processes (see SetBaseline); typically the nodes of the batch
// just chosen, whose rollouts the next call will see. It is nil before any call and when no
// channel corrects drift.
func (pr *Predictor) Baseline(nodes []int) []Baseline {
	d := &pr.drift
	if !d.active() || d.g == nil {
		return nil
	}
	out := make([]Baseline, 0, len(nodes))
	for _, i := range nodes {
		nd := d.g.Nodes[i]
		out = append(out, Baseline{Env: d.g.Envs[nd.Env], Task: nd.Task, Rollouts: d.rollouts[i], Sum: d.sum[i],
			Mean: d.baseMean[i], Tried: d.rollouts[i] > 0})
	}
	return out
}

// SetBaseline makes the next call measure drift against b alone, typically what Baseline
// returned for the batch of the last stored answer, in this process or an earlier one:
// whatever the Predictor did before, the measurement is then a function of b and the
// statistics, so that a scheduler measures the same with or without a restart. Nodes b does
// not name are not measured. Without SetBaseline, a call measures against the previous call.
func (pr *Predictor) SetBaseline(b []Baseline) {
	pr.drift.pending = make(map[[2]string]Baseline, len(b))
	for _, x := range b {
		if finite(x.Sum) && finite(x.Mean) {
			pr.drift.pending[[2]string{x.Env, x.Task}] = x
		}
	}
}

func newDrift() drift { return drift{offset: map[string]float64{}} }

// Offset returns the current logit offset of environment env (0 when none was measured).
func (pr *Predictor) Offset(env string) float64 { return pr.drift.offset[env] }

// Offsets returns a copy of the logit offsets by environment name, so that a caller can keep
// them across processes (see SetOffsets). It is empty before any drift was measured or set.
func (pr *Predictor) Offsets() map[string]float64 { return maps.Clone(pr.drift.offset) }

// SetOffsets replaces the logit offsets by environment name with offsets, typically those
// that Offsets returned in an earlier process. Values are clamped to ±DriftMax; NaN and
// infinite values are ignored. A Predictor whose DriftRate is 0 corrects no drift and keeps no
// offsets: SetOffsets then clears them.
//
// Only the offsets are restored, not the baseline that the next call measures drift against
// (the previous call's statistics and predictions per node; see SetBaseline): without one, a
// Predictor that has not predicted yet measures nothing in its first call and applies the
// set offsets as they are; later calls measure and update them as usual. A Predictor that
// has predicted keeps its baseline.
func (pr *Predictor) SetOffsets(offsets map[string]float64) {
	clear(pr.drift.offset)
	if pr.p.DriftRate == 0 {
		return
	}
	for env, off := range offsets {
		if finite(off) {
			pr.drift.offset[env] = min(max(off, -pr.p.DriftMax), pr.p.DriftMax)
		}
	}
}

// Rechosen returns the re-chosen offset: the logit offset of every node rolled out before (0
// when none was measured or RechosenRate is 0).
func (pr *Predictor) Rechosen() float64 { return pr.drift.re }

// SetRechosen replaces the re-chosen offset, typically with what Rechosen returned in an
// earlier process. It is clamped to ±RechosenMax; NaN and infinities set 0, and so does a
// Predictor whose RechosenRate is 0. Like SetOffsets, it restores no baseline.
func (pr *Predictor) SetRechosen(off float64) {
	pr.drift.re = 0
	if pr.p.RechosenRate > 0 && finite(off) {
		pr.drift.re = min(max(off, -pr.p.RechosenMax), pr.p.RechosenMax)
	}
}

// active reports whether any channel corrects drift, so that calls keep a baseline.
func (d *drift) active() bool { return d.rate > 0 || d.reRate > 0 }

// measure updates the offsets from the rollouts that arrived since the previous call. With
// the re-chosen channel on, nodes rolled out before the previous call measure it, and the
// others their environment's offset; with it off, every node measures its environment's.
func (d *drift) measure(g *graph.Graph, tasks []stats.Task, p Params) {
	d.rate, d.maxOff, d.minRollouts = p.DriftRate, p.DriftMax, int64(p.DriftMinRollouts)
	d.reRate, d.reMax = p.RechosenRate, p.RechosenMax
	if d.reRate == 0 {
		d.re = 0
	}
	defer d.current(g)
	pending := d.pending
	d.pending = nil
	if !d.active() || d.g == nil && pending == nil {
		return
	}
	// before returns the node's baseline: as of the previous call, or as given to SetBaseline
	before := func(i int) (Baseline, bool) {
		nd := g.Nodes[i]
		b, ok := pending[[2]string{g.Envs[nd.Env], nd.Task}]
		return b, ok
	}
	if pending == nil {
		prev := d.align(g)
		before = func(i int) (Baseline, bool) {
			j := prev[i]
			if j < 0 {
				return Baseline{}, false
			}
			return Baseline{Rollouts: d.rollouts[j], Sum: d.sum[j], Mean: d.baseMean[j], Tried: d.rollouts[j] > 0}, true
		}
	}
	realised := make([]float64, len(g.Envs))
	predicted := make([]float64, len(g.Envs))
	count := make([]int64, len(g.Envs))
	var reReal, rePred float64
	var reCount int64
	for i := range tasks {
		b, ok := before(i)
		if !ok || tasks[i].Rollouts <= b.Rollouts {
			continue
		}
		dn := tasks[i].Rollouts - b.Rollouts
		real, pred := tasks[i].Sum-b.Sum, float64(dn)*b.Mean
		if d.reRate > 0 && b.Tried {
			reReal, rePred, reCount = reReal+real, rePred+pred, reCount+dn
			continue
		}
		e := g.Nodes[i].Env
		realised[e] += real
		predicted[e] += pred
		count[e] += dn
	}
	for e, name := range g.Envs {
		if d.rate > 0 && count[e] > 0 && count[e] >= d.minRollouts {
			d.update(name, realised[e], predicted[e], float64(count[e]))
		}
	}
	if reCount > 0 && reCount >= d.minRollouts {
		gap := logit((reReal+0.5)/(float64(reCount)+1)) - logit((rePred+0.5)/(float64(reCount)+1))
		d.re = min(max((1-d.reRate)*d.re+d.reRate*gap, -d.reMax), d.reMax)
	}
}

// current fills cur with the offsets of g's environments.
func (d *drift) current(g *graph.Graph) {
	d.cur = resize(d.cur, len(g.Envs))
	for e, name := range g.Envs {
		d.cur[e] = d.offset[name]
	}
}

func (d *drift) update(env string, realised, predicted, n float64) {
	gap := logit((realised+0.5)/(n+1)) - logit((predicted+0.5)/(n+1))
	off := (1-d.rate)*d.offset[env] + d.rate*gap
	d.offset[env] = min(max(off, -d.maxOff), d.maxOff)
}

// align maps each node of g to its index in the previous graph, -1 when it is new. Both node
// lists are sorted by environment name, then task, so one merge pass does it.
func (d *drift) align(g *graph.Graph) []int {
	d.prev = resize(d.prev, g.Len())
	prev := d.prev
	if g == d.g {
		for i := range prev {
			prev[i] = i
		}
		return prev
	}
	j := 0
	for i, nd := range g.Nodes {
		for j < d.g.Len() && compareNode(d.g, j, g, nd) < 0 {
			j++
		}
		prev[i] = -1
		if j < d.g.Len() && compareNode(d.g, j, g, nd) == 0 {
			prev[i] = j
		}
	}
	return prev
}

func compareNode(og *graph.Graph, j int, g *graph.Graph, nd graph.Node) int {
	o := og.Nodes[j]
	if c := cmp.Compare(og.Envs[o.Env], g.Envs[nd.Env]); c != 0 {
		return c
	}
	return cmp.Compare(o.Task, nd.Task)
}

// shift moves a Beta posterior on the logit scale, keeping its effective count: a node rolled
// out before by the re-chosen offset when that channel is on, else by a share stale of its
// environment's offset.
func (d *drift) shift(env int32, alpha, beta float64, tried bool, stale float64) (float64, float64) {
	off := d.cur[env] * stale
	if d.reRate > 0 && tried {
		off = d.re
	}
	if off == 0 {
		return alpha, beta
	}
	n := alpha + beta
	m := sigmoid(logit(alpha/n) + off)
	return m * n, (1 - m) * n
}

func (d *drift) base(i int, mean float64) {
	if d.active() {
		d.next[i] = mean
	}
}

// remember keeps what the next call needs to measure drift. It runs after the predictions of
// a call are made.
func (d *drift) remember(g *graph.Graph, tasks []stats.Task, _ []Prediction) {
	if !d.active() {
		return
	}
	d.g = g
	d.rollouts = resize(d.rollouts, len(tasks))
	d.sum = resize(d.sum, len(tasks))
	for i := range tasks {
		d.rollouts[i], d.sum[i] = tasks[i].Rollouts, tasks[i].Sum
	}
	d.baseMean, d.next = d.next, d.baseMean
}

// begin sizes the buffer of base means for a call over n nodes.
func (d *drift) begin(n int) {
	if d.active() {
		d.next = resize(d.next, n)
	}
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
