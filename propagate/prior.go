package propagate

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/internal/par"
	"github.com/envsched/envsched/stats"
	"gonum.org/v1/gonum/floats"
)

// featurePrior is the prior mean of every node when the graph carries catalogue features: a
// weighted ridge regression of the logit of each rolled-out node's decayed evidence on its
// words, tools and tags, its environment and an intercept, fitted again when rollouts came
// since the fit a call is given (with Params.PriorRefit, when they grew by that share), and
// kept as it is until then. It
// tells a task never rolled out what tasks with the same words did, feature by feature, which
// the environment mean cannot: "refund" may be hard and "look up" easy in the same
// environment.
//
// The regression minimises Σ w_i (y_i − x_i·β)² + λ‖β‖², with y_i = ln((a_i+½)/(b_i+½)) and
// w_i = n_i/(n_i + fitHalfCount), n_i = a_i + b_i, over at most fitRows nodes, by conjugate
// gradients with a diagonal preconditioner, started from zero or from the WarmStart of the
// State the caller gives (State.Warm): the same statistics and the same start give the same fit,
// whatever was fitted before. Only the features of the fitted rows are unknowns:
// under the ridge penalty a feature that no fitted row has gets exactly 0, so leaving it out
// changes nothing, and the cost of a call follows the rows, not the catalogue's vocabulary.
type featurePrior struct {
	ok    bool
	logit []float64 // fitted logit per node

	rows            []int32     // nodes in the fit
	col             []int32     // per feature of the catalogue: its unknown, or -1 when no row has it
	off, ids        []int32     // the rows' features as unknowns: row k is ids[off[k]:off[k+1]]
	envRows         []int32     // scratch: rows kept per environment by the cut
	roundAt, sorted []int32     // scratch of byRecency
	rowRound        []int64     // scratch of chooseRows: the round of each row
	pieceRows       [][]int32   // scratch of collectRows: the rows of each piece of nodes
	collected       bool        // the pieces were collected by the call's pass over the tasks
	firstFeat       [][]int32   // scratch of columns: each chunk's features, first seen first
	pieceRounds     [][]int64   // and their rounds
	w, y, u         []float64   // per row: weight, target, scratch
	beta, r, p, ap  []float64   // per unknown: the fit, the residual, the direction, A times it
	z, diag         []float64   // per unknown: the preconditioned residual, A's diagonal
	parts           [][]float64 // per chunk of rows: its share of Xᵀ u
	nf              int         // feature unknowns; then one per environment, then the intercept

	start WarmStart // where the next fit starts
	envs  []string  // the environments of the last fit's graph
	iters int       // conjugate-gradient iterations of the last fit
	total int64     // rollouts counted over every node in the call in progress
	kept  bool      // the call kept start's fit instead of fitting (see keeps)
	coef  []float64 // scratch of keep: start's value of each catalogue feature
	mean  []float64 // sigmoid of logit, per node
	// keptOn is what keep worked logit and mean out from, to skip the pass when a call keeps
	// the same fit on the same graph; zero when they are not keep's.
	keptOn keptFit
}

// fitHalfCount is the evidence, in rollouts, at which a node weighs half as much as a node
// with endless evidence: eight rollouts tell a logit only roughly.
const fitHalfCount = 8

// fitIters bounds the conjugate-gradient iterations; fitTol is the relative residual at which
// they stop (with the diagonal preconditioner, a third of the iterations that 1e-6 needs; see
// BENCHMARKS.md for how far the predicted means move). fitRows caps the rows of the fit:
// the nodes rolled out most recently, whose evidence tells most about the current policy and
// weighs most, with at least fitEnvRows of each environment's (when it has them) so that no
// environment drops out of the fit.
const (
	fitIters   = 200
	fitTol     = 1e-4
	fitRows    = 16384
	fitEnvRows = 64
	fitChunk   = 2048 // rows summed apart in Xᵀ u
)

// fit fits the regression for the call in progress (own holds the decayed evidence) and fills
// logit for every node. Without features it does nothing and ok stays false.
func (fp *featurePrior) fit(g *graph.Graph, tasks []stats.Task, own []evidence, lambda float64) {
	fp.ok = false
	if !fp.fits(g, lambda) {
		return
	}
	fp.ok, fp.envs = true, g.Envs
	if fp.kept {
		fp.keep(g)
		return
	}
	fp.chooseRows(g, tasks, own)
	fp.columns(g)
	E := len(g.Envs)
	dim := fp.nf + E + 1
	fp.w, fp.y = resize(fp.w, len(fp.rows)), resize(fp.y, len(fp.rows))
	for k, i := range fp.rows {
		a, b := float64(own[i].a), float64(own[i].b)
		fp.w[k] = (a + b) / (a + b + fitHalfCount)
		fp.y[k] = math.Log((a + 0.5) / (b + 0.5))
	}
	fp.u = resize(fp.u, len(fp.rows))
	for _, s := range []*[]float64{&fp.beta, &fp.r, &fp.p, &fp.ap, &fp.z, &fp.diag} {
		*s = resize(*s, dim)
		clear(*s)
	}
	// the diagonal of A = Xᵀ W X + λ I (features are 0 or 1): the Jacobi preconditioner
	fp.xt(g, fp.w, fp.diag)
	floats.AddConst(lambda, fp.diag)
	// b = Xᵀ W y; r = b − Aβ from the start β
	for k := range fp.rows {
		fp.u[k] = fp.w[k] * fp.y[k]
	}
	fp.xt(g, fp.u, fp.r)
	// the tolerance is relative to b, not to the first residual: a good start stops early
	stop := fitTol * fitTol * floats.Dot(fp.r, fp.r)
	if fp.startAt(g) {
		fp.apply(g, fp.beta, fp.ap, lambda)
		floats.Sub(fp.r, fp.ap)
	}
	floats.DivTo(fp.z, fp.r, fp.diag)
	copy(fp.p, fp.z)
	rz := floats.Dot(fp.r, fp.z)
	fp.iters = 0
	for it := 0; it < fitIters && rz > 0 && floats.Dot(fp.r, fp.r) > stop; it++ {
		fp.iters++
		fp.apply(g, fp.p, fp.ap, lambda)
		alpha := rz / floats.Dot(fp.p, fp.ap)
		floats.AddScaled(fp.beta, alpha, fp.p)
		floats.AddScaled(fp.r, -alpha, fp.ap)
		if floats.Dot(fp.r, fp.r) <= stop {
			break
		}
		floats.DivTo(fp.z, fp.r, fp.diag)
		next := floats.Dot(fp.r, fp.z)
		floats.AddScaledTo(fp.p, fp.z, next/rz, fp.p)
		rz = next
	}
	fp.forget()
	fp.logit, fp.mean = resize(fp.logit, g.Len()), resize(fp.mean, g.Len())
	parallelNodes(g.Len(), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			s := fp.beta[fp.nf+int(g.Nodes[i].Env)] + fp.beta[fp.nf+E]
			for _, f := range g.Feat.Row(i) {
				if c := fp.col[f]; c >= 0 {
					s += fp.beta[c]
				}
			}
			fp.logit[i], fp.mean[i] = s, sigmoid(s)
		}
	})
}

// keeps reports whether the call keeps the fit it starts from (start) instead of fitting
// again: start was fitted on the environments of g, and the rollouts counted over every node
// now (total) are those start was fitted on (no rollout came since), or more but fewer than
// 1 + refit times as many. So the fit moves only when new evidence has come to move it, and
// whether it moves is a function of the statistics and the start, as the fit itself is.
func (fp *featurePrior) keeps(g *graph.Graph, refit float64) bool {
	ws := &fp.start
	if ws.Rollouts <= 0 || fp.total < ws.Rollouts || len(ws.EnvVal) != len(ws.Envs) ||
		len(ws.FeatVal) < len(ws.Feat) || !slices.Equal(ws.Envs, g.Envs) {
		return false
	}
	return fp.total == ws.Rollouts || float64(fp.total) < float64(ws.Rollouts)*(1+refit)
}

// keep fills logit and mean for every node from start's values: its environment's, the
// intercept and its features' (0 for a feature start has none of), as fit does from its
// solution. When the last call kept the same values on the same graph (see keptOn), they are
// already there.
func (fp *featurePrior) keep(g *graph.Graph) {
	ws := &fp.start
	fp.iters = 0
	if fp.keptOn.same(g, ws) {
		return
	}
	fp.forget()
	fp.coef = resize(fp.coef, g.Feat.Dim)
	clear(fp.coef)
	for k, f := range ws.Feat {
		if int(f) < len(fp.coef) {
			fp.coef[f] = float64(ws.FeatVal[k])
		}
	}
	icpt := float64(ws.Intercept)
	fp.logit, fp.mean = resize(fp.logit, g.Len()), resize(fp.mean, g.Len())
	parallelNodes(g.Len(), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			s := float64(ws.EnvVal[g.Nodes[i].Env]) + icpt
			for _, f := range g.Feat.Row(i) {
				s += fp.coef[f]
			}
			fp.logit[i], fp.mean[i] = s, sigmoid(s)
		}
	})
	fp.keptOn = keptFit{g: g, n: g.Len(), feat: g.Feat, envs: len(g.Envs), ws: cloneWarm(*ws)}
}

// keptFit names what the prior's logit and mean were last worked out from by keep: a graph
// (by identity: a Predictor takes a graph it is given again to be unchanged, as graphs are
// made anew, not edited, when tasks come) and the fit's values.
type keptFit struct {
	g       *graph.Graph
	n, envs int
	feat    *graph.Features
	ws      WarmStart
}

// same reports whether logit and mean were worked out by keep from g and ws.
func (k *keptFit) same(g *graph.Graph, ws *WarmStart) bool {
	return k.g != nil && k.g == g && k.n == g.Len() && k.feat == g.Feat && k.envs == len(g.Envs) &&
		k.ws.Intercept == ws.Intercept && k.ws.Rollouts == ws.Rollouts &&
		slices.Equal(k.ws.Feat, ws.Feat) && slices.Equal(k.ws.FeatVal, ws.FeatVal) &&
		slices.Equal(k.ws.Envs, ws.Envs) && slices.Equal(k.ws.EnvVal, ws.EnvVal)
}

// forget marks logit and mean as not kept's (about to be overwritten).
func (fp *featurePrior) forget() { fp.keptOn = keptFit{} }

// cloneWarm returns a copy of ws that shares no slice with it.
func cloneWarm(ws WarmStart) WarmStart {
	ws.Feat, ws.FeatVal = slices.Clone(ws.Feat), slices.Clone(ws.FeatVal)
	ws.Envs, ws.EnvVal = slices.Clone(ws.Envs), slices.Clone(ws.EnvVal)
	return ws
}

// fits reports whether fit fits a regression for g with ridge lambda.
func (fp *featurePrior) fits(g *graph.Graph, lambda float64) bool {
	return g.Feat != nil && lambda > 0 && g.Feat.Len() == g.Len()
}

// chooseRows sets rows to the nodes of the fit, in node order: every node with evidence, or,
// when they are more than fitRows, the most recently rolled out (ties by node, so that the
// cut is deterministic), after the fitEnvRows most recent of each environment.
func (fp *featurePrior) chooseRows(g *graph.Graph, tasks []stats.Task, own []evidence) {
	fp.collectRows(tasks, own)
	if len(fp.rows) <= fitRows {
		return
	}
	fp.byRecency(tasks)
	fp.envRows = resize(fp.envRows, len(g.Envs))
	clear(fp.envRows)
	kept, rest := 0, fp.rows[:0:0]
	for _, i := range fp.rows { // each environment's most recent first, in place
		if e := g.Nodes[i].Env; fp.envRows[e] < fitEnvRows && kept < fitRows {
			fp.envRows[e]++
			fp.rows[kept] = i
			kept++
		} else {
			rest = append(rest, i)
		}
	}
	n := min(fitRows, kept+len(rest))
	fp.rows = append(fp.rows[:kept], rest[:n-kept]...)
	slices.Sort(fp.rows)
}

// collectRows sets rows to every node with evidence, in node order, and rowRound to their
// rounds: in pieces of chunk nodes on every CPU (a pass over every task's statistics), the
// pieces joined in order. When the call's own pass over the tasks collected the pieces
// (collected; Predictor.ownEvidence), it only joins them, once.
func (fp *featurePrior) collectRows(tasks []stats.Task, own []evidence) {
	pieces := (len(tasks) + chunk - 1) / chunk
	if !fp.collected {
		fp.growPieces(pieces)
		par.Ranges(pieces, 4, func(lo, hi int) {
			for c := lo; c < hi; c++ {
				fp.collectPiece(c, tasks, own)
			}
		})
	}
	fp.collected = false
	fp.rows, fp.rowRound = fp.rows[:0], fp.rowRound[:0]
	for c := range pieces {
		fp.rows = append(fp.rows, fp.pieceRows[c]...)
		fp.rowRound = append(fp.rowRound, fp.pieceRounds[c]...)
	}
}

// growPieces makes room for the rows of pieces pieces of chunk nodes.
func (fp *featurePrior) growPieces(pieces int) {
	fp.pieceRows, fp.pieceRounds = resize(fp.pieceRows, pieces), resize(fp.pieceRounds, pieces)
}

// collectPiece sets piece c of the rows: the nodes from c·chunk to (c+1)·chunk with rollouts
// and evidence, in node order, and their rounds. Only c's entries of the pieces are written.
func (fp *featurePrior) collectPiece(c int, tasks []stats.Task, own []evidence) {
	rows, rounds := fp.pieceRows[c][:0], fp.pieceRounds[c][:0]
	for i := c * chunk; i < min(len(tasks), (c+1)*chunk); i++ {
		if a, b := own[i].a, own[i].b; tasks[i].Rollouts > 0 && a+b > 0 {
			rows = append(rows, int32(i))
			rounds = append(rounds, tasks[i].Round)
		}
	}
	fp.pieceRows[c], fp.pieceRounds[c] = rows, rounds
}

// byRecency sorts rows by round, latest first, ties by node. rows are in node order, so a
// stable counting sort by round gives that order in O(rows + span of rounds); when the
// rounds span far more than the rows, it sorts by comparison instead. Both give the same order.
// rowRound[k] is the round of rows[k] (read once from tasks, whose entries are large).
func (fp *featurePrior) byRecency(tasks []stats.Task) {
	lo, hi := fp.rowRound[0], fp.rowRound[0]
	for _, r := range fp.rowRound {
		lo, hi = min(lo, r), max(hi, r)
	}
	if uint64(hi-lo) >= uint64(2*len(fp.rows)) {
		slices.SortFunc(fp.rows, func(x, y int32) int {
			if c := cmp.Compare(tasks[y].Round, tasks[x].Round); c != 0 {
				return c
			}
			return cmp.Compare(x, y)
		})
		return
	}
	// start[k] is where the rows of round hi − k begin
	fp.roundAt = resize(fp.roundAt, int(hi-lo)+2)
	clear(fp.roundAt)
	for _, r := range fp.rowRound {
		fp.roundAt[hi-r+1]++
	}
	for k := 1; k < len(fp.roundAt); k++ {
		fp.roundAt[k] += fp.roundAt[k-1]
	}
	fp.sorted = resize(fp.sorted, len(fp.rows))
	for x, i := range fp.rows {
		k := hi - fp.rowRound[x]
		fp.sorted[fp.roundAt[k]] = i
		fp.roundAt[k]++
	}
	fp.rows, fp.sorted = fp.sorted, fp.rows
}

// columns numbers the features of the fitted rows in order of first appearance and writes
// the rows as unknowns: row k is its environment's unknown, the intercept's, then its
// features' (so that the passes over the rows read nothing but ids).
//
// The rows are read in chunks of fitChunk on every CPU: each chunk lists its features in order
// of first appearance within it; the lists, taken in chunk order, number the features (a
// feature's first appearance overall is its first in the first chunk that has it, so the
// numbering is the serial one); then each chunk writes its rows' unknowns.
func (fp *featurePrior) columns(g *graph.Graph) {
	fp.col = resize(fp.col, g.Feat.Dim)
	for f := range fp.col {
		fp.col[f] = -1
	}
	rows := len(fp.rows)
	fp.off = resize(fp.off, rows+1)
	fp.off[0] = 0
	for k, i := range fp.rows {
		fp.off[k+1] = fp.off[k] + int32(2+len(g.Feat.Row(int(i))))
	}
	fp.ids = resize(fp.ids, int(fp.off[rows]))
	chunks := (rows + fitChunk - 1) / fitChunk
	fp.firstFeat = resize(fp.firstFeat, chunks)
	par.Ranges(chunks, 2, func(lo, hi int) {
		seen := make([]uint64, (g.Feat.Dim+63)/64)
		for c := lo; c < hi; c++ {
			clear(seen)
			first := fp.firstFeat[c][:0]
			for _, i := range fp.rows[c*fitChunk : min(rows, (c+1)*fitChunk)] {
				for _, f := range g.Feat.Row(int(i)) {
					if seen[f/64]&(1<<(f%64)) == 0 {
						seen[f/64] |= 1 << (f % 64)
						first = append(first, f)
					}
				}
			}
			fp.firstFeat[c] = first
		}
	})
	fp.nf = 0
	for _, first := range fp.firstFeat[:chunks] {
		for _, f := range first {
			if fp.col[f] < 0 {
				fp.col[f] = int32(fp.nf)
				fp.nf++
			}
		}
	}
	nf, E := int32(fp.nf), int32(len(g.Envs))
	par.Ranges(chunks, 2, func(lo, hi int) {
		for k := lo * fitChunk; k < min(rows, hi*fitChunk); k++ {
			i := int(fp.rows[k])
			row := fp.ids[fp.off[k]:fp.off[k+1]]
			row[0], row[1] = nf+g.Nodes[i].Env, nf+E // environment and intercept
			for j, f := range g.Feat.Row(i) {
				row[2+j] = fp.col[f]
			}
		}
	})
}

// apply sets out = (Xᵀ W X + λ I) v. Each row of a chunk works out its u = w·x·v (as xrow)
// and scatters it at once, while the row's features are in cache; the sums are those of xt
// (each unknown adds the rows' u in row order, as scatter does).
func (fp *featurePrior) apply(g *graph.Graph, v, out []float64, lambda float64) {
	fp.chunked(out, func(part []float64, lo, hi int) {
		clear(part)
		for k := lo; k < hi; k++ {
			u := fp.w[k] * fp.xrow(k, v)
			for _, c := range fp.ids[fp.off[k]:fp.off[k+1]] {
				part[c] += u
			}
		}
	})
	for k := range out {
		out[k] += lambda * v[k]
	}
}

// xt sets out = Xᵀ u over the rows of the fit.
func (fp *featurePrior) xt(g *graph.Graph, u, out []float64) {
	fp.chunked(out, func(part []float64, lo, hi int) { fp.scatter(u, part, lo, hi) })
}

// chunked sets out to the sum of sum(part, lo, hi) over the chunks of fitChunk rows, where sum
// sets part to its chunk's share. Chunks are summed apart, in parallel, and added up in chunk
// order: the sums do not depend on the number of CPUs.
func (fp *featurePrior) chunked(out []float64, sum func(part []float64, lo, hi int)) {
	chunks := (len(fp.rows) + fitChunk - 1) / fitChunk
	if chunks <= 1 {
		sum(out, 0, len(fp.rows))
		return
	}
	fp.parts = resize(fp.parts, chunks)
	par.Ranges(chunks, 2, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			fp.parts[c] = resize(fp.parts[c], len(out))
			sum(fp.parts[c], c*fitChunk, min(len(fp.rows), (c+1)*fitChunk))
		}
	})
	copy(out, fp.parts[0])
	for _, part := range fp.parts[1:chunks] {
		floats.Add(out, part)
	}
}

// scatter sets out = Xᵀ u over the rows lo to hi of the fit.
func (fp *featurePrior) scatter(u, out []float64, lo, hi int) {
	clear(out)
	for k := lo; k < hi; k++ {
		for _, c := range fp.ids[fp.off[k]:fp.off[k+1]] {
			out[c] += u[k]
		}
	}
}

// xrow is x·v for row k of the fit: its environment, the intercept, then its features.
func (fp *featurePrior) xrow(k int, v []float64) float64 {
	row := fp.ids[fp.off[k]:fp.off[k+1]]
	s := v[row[0]] + v[row[1]]
	for _, c := range row[2:] {
		s += v[c]
	}
	return s
}

// WarmStart is where the feature prior's fit starts: an earlier fit's solution, by catalogue
// feature id (graph.Features), environment name and intercept, in float32. The fit then stops,
// as from zero, when its residual is within the tolerance relative to the right-hand side, so
// a start near the solution saves most of the iterations; the fit stays a function of the
// statistics and the start. The zero value starts from zero. A scheduler stores the warm start
// with each answer and gives it back before the next prediction, so that a restarted process
// starts where the running one would have (see schedule).
type WarmStart struct {
	Feat      []int32   // feature ids, increasing
	FeatVal   []float32 // per entry of Feat
	Envs      []string  // environment names, increasing
	EnvVal    []float32 // per entry of Envs
	Intercept float32
	// Rollouts are the rollouts counted over every node (stats.Task.Rollouts) by the call
	// that fitted it; 0 when not known (an encoding of version 1), which a call never keeps
	// (see Params.PriorRefit).
	Rollouts int64
}

// WarmStart returns the solution of the last fit of the feature prior as a warm start (the
// zero value when the last call fitted none). FitIterations is what that fit took.
func (pr *Predictor) WarmStart() WarmStart { return pr.prior.solution() }

// FitIterations returns the conjugate-gradient iterations of the last fit (0 when none).
func (pr *Predictor) FitIterations() int {
	if !pr.prior.ok {
		return 0
	}
	return pr.prior.iters
}

// startAt sets β to the warm start, for the unknowns of this fit, and reports whether any
// entry is not zero.
func (fp *featurePrior) startAt(g *graph.Graph) bool {
	ws, nonzero := &fp.start, false
	set := func(c int, v float32) {
		fp.beta[c] = float64(v)
		nonzero = nonzero || v != 0
	}
	for k, f := range ws.Feat {
		if int(f) < len(fp.col) && fp.col[f] >= 0 {
			set(int(fp.col[f]), ws.FeatVal[k])
		}
	}
	for k, name := range ws.Envs {
		if e, ok := slices.BinarySearch(g.Envs, name); ok {
			set(fp.nf+e, ws.EnvVal[k])
		}
	}
	set(fp.nf+len(g.Envs), ws.Intercept)
	return nonzero
}

// solution returns the last fit as a warm start: the start itself when the call kept it.
func (fp *featurePrior) solution() WarmStart {
	if !fp.ok {
		return WarmStart{}
	}
	if fp.kept {
		return fp.start
	}
	ws := WarmStart{Rollouts: fp.total}
	for f, c := range fp.col {
		if c >= 0 {
			ws.Feat = append(ws.Feat, int32(f))
			ws.FeatVal = append(ws.FeatVal, float32(fp.beta[c]))
		}
	}
	ws.Envs = slices.Clone(fp.envs)
	for e := range fp.envs {
		ws.EnvVal = append(ws.EnvVal, float32(fp.beta[fp.nf+e]))
	}
	ws.Intercept = float32(fp.beta[fp.nf+len(fp.envs)])
	return ws
}

// warmStartVersion is the first byte of an encoded WarmStart. Version 1 had no Rollouts; it
// is still read, with Rollouts 0.
const (
	warmStartVersion  = 2
	warmStartVersion1 = 1
)

// MarshalBinary encodes ws compactly: feature ids as increasing deltas (uvarint), values as
// float32 bits, then Rollouts (uvarint).
func (ws WarmStart) MarshalBinary() ([]byte, error) {
	out := []byte{warmStartVersion}
	out = binary.AppendUvarint(out, uint64(len(ws.Feat)))
	prev := int32(-1)
	for k, f := range ws.Feat {
		if f <= prev || k >= len(ws.FeatVal) {
			return nil, fmt.Errorf("warm start: feature ids not increasing or values missing at %d", k)
		}
		out = binary.AppendUvarint(out, uint64(f-prev))
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(ws.FeatVal[k]))
		prev = f
	}
	if len(ws.EnvVal) != len(ws.Envs) {
		return nil, fmt.Errorf("warm start: %d environments, %d values", len(ws.Envs), len(ws.EnvVal))
	}
	out = binary.AppendUvarint(out, uint64(len(ws.Envs)))
	for k, e := range ws.Envs {
		out = binary.AppendUvarint(out, uint64(len(e)))
		out = append(out, e...)
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(ws.EnvVal[k]))
	}
	if ws.Rollouts < 0 {
		return nil, fmt.Errorf("warm start: %d rollouts", ws.Rollouts)
	}
	out = binary.LittleEndian.AppendUint32(out, math.Float32bits(ws.Intercept))
	return binary.AppendUvarint(out, uint64(ws.Rollouts)), nil
}

// errWarmStart is the error of a WarmStart that does not decode.
var errWarmStart = errors.New("warm start: bad encoding")

// UnmarshalBinary decodes what MarshalBinary encoded.
func (ws *WarmStart) UnmarshalBinary(data []byte) error {
	d := wsDecoder{b: data}
	version := d.byte()
	if version != warmStartVersion && version != warmStartVersion1 {
		return errWarmStart
	}
	var out WarmStart
	n := d.count()
	prev := int64(-1)
	for range n {
		prev += int64(d.uvarint())
		if prev > math.MaxInt32 || d.bad {
			return errWarmStart
		}
		out.Feat = append(out.Feat, int32(prev))
		out.FeatVal = append(out.FeatVal, d.float32())
	}
	for range d.count() {
		out.Envs = append(out.Envs, d.str())
		out.EnvVal = append(out.EnvVal, d.float32())
	}
	out.Intercept = d.float32()
	if version == warmStartVersion {
		if n := d.uvarint(); n <= math.MaxInt64 {
			out.Rollouts = int64(n)
		} else {
			d.bad = true
		}
	}
	if d.bad || len(d.b) != 0 {
		return errWarmStart
	}
	*ws = out
	return nil
}

// wsDecoder reads a WarmStart's encoding; bad is set at the first short or malformed read.
type wsDecoder struct {
	b   []byte
	bad bool
}

func (d *wsDecoder) byte() byte {
	if len(d.b) < 1 {
		d.bad = true
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *wsDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a length, bounded by the bytes left (every entry takes at least 5).
func (d *wsDecoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)/5) {
		d.bad = true
		return 0
	}
	return int(n)
}

func (d *wsDecoder) float32() float32 {
	if len(d.b) < 4 {
		d.bad = true
		return 0
	}
	v := math.Float32frombits(binary.LittleEndian.Uint32(d.b))
	d.b = d.b[4:]
	return v
}

func (d *wsDecoder) str() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.bad = true
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
