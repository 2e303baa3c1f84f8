package graph

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
)

// scoreSlack absorbs the rounding of float32 partial sums in the candidate bound.
const scoreSlack = 1e-4

// scratch is one worker's accumulator over all docs; only touched entries are non-zero.
type scratch struct {
	acc          []float32
	touched      []int32
	intra, cross []cand
	heap         []cand
	open         []int
	links        []link
	los          []float64
	qw           []float32 // the query's weights by feature id, zero elsewhere
}

func (sc *scratch) add(id int32, x float32) {
	if sc.acc[id] == 0 {
		sc.touched = append(sc.touched, id)
	}
	sc.acc[id] += x
}

// queryResult is what scoring one doc finds: its best neighbours and, when asked, every
// candidate that may reach the threshold that applies to it.
type queryResult struct {
	intra, cross []link
	cands        []cand
}

// cand is a candidate neighbour with bounds of its similarity; exact when lo == hi.
type cand struct {
	to     int32
	lo, hi float64
}

// query finds the neighbours of doc id: candidates from the inverted index and LSH buckets,
// bounded by their partial dot products, of which only those that can enter the top lists are
// scored exactly. The picks are exact: the K best by exact similarity, ties by node order.
func (b *Builder) query(id int32, sc *scratch, keepCands bool) (r queryResult) {
	d := b.doc(id)
	if !d.described() {
		return queryResult{}
	}
	b.gather(id, sc)
	b.gatherLSH(id, sc)
	intra, cross := sc.intra[:0], sc.cross[:0]
	thrIn, thrX := b.threshold(d.env, d.env), b.threshold(d.env, -1)
	if d.emb == nil {
		intra, cross = b.boundSparse(d, sc, thrIn, thrX, intra, cross)
	}
	for _, o := range sc.touched {
		partial := float64(sc.acc[o])
		sc.acc[o] = 0
		same := b.meta[o].env == d.env
		thr := thrX
		if same {
			thr = thrIn
		}
		c, ok := b.bound(d, o, partial, thr)
		switch {
		case !ok:
		case same:
			intra = append(intra, c)
		default:
			cross = append(cross, c)
		}
	}
	sc.touched = sc.touched[:0]
	sc.intra, sc.cross = intra, cross
	if keepCands {
		cands := append(slices.Clone(intra), cross...)
		defer func() { r.cands = cands }()
	}
	sc.spread(d, len(b.df))
	r.intra = b.best(d, intra, b.opt.K, b.opt.MinSim, sc)
	r.cross = b.best(d, cross, b.opt.KCross, b.opt.MinSimCross, sc)
	sc.unspread(d)
	return r
}

// boundSparse is the loop of query over the touched docs, with bound inlined, for a query
// without an embedding (the common case): the same candidates and bounds, computed the same
// way. It resets the accumulator and empties the touched list.
func (b *Builder) boundSparse(q *doc, sc *scratch, thrIn, thrX float64, intra, cross []cand) ([]cand, []cand) {
	ql, env, described := q.left2, q.env, len(q.feats) > 0
	for _, o := range sc.touched {
		partial := float64(sc.acc[o])
		sc.acc[o] = 0
		m := b.meta[o]
		same := m.env == env
		thr := thrX
		if same {
			thr = thrIn
		}
		hi := partial + scoreSlack
		if m.left2 > 0 && ql > 0 {
			hi += math.Sqrt(ql * m.left2)
		}
		if !(hi >= thr && described) {
			continue
		}
		c := cand{o, partial - scoreSlack, hi}
		if same {
			intra = append(intra, c)
		} else {
			cross = append(cross, c)
		}
	}
	sc.touched = sc.touched[:0]
	return intra, cross
}

// bound returns the candidate o of q with bounds of its similarity, or false when even the
// upper bound misses thr, the threshold of the pair (+Inf when such edges are disabled). partial is the dot product over the features
// that are not capped; the capped rest adds at most the product of their left-out norms.
func (b *Builder) bound(q *doc, o int32, partial, thr float64) (cand, bool) {
	hi := partial + scoreSlack
	if l := b.meta[o].left2; l > 0 && q.left2 > 0 {
		hi += math.Sqrt(q.left2 * l)
	}
	if q.emb != nil {
		if od := b.doc(o); od.emb != nil && len(q.emb) == len(od.emb) {
			s := b.exact(q, od)
			return cand{o, s, s}, s >= thr && s > 0
		}
	}
	// A doc reached only through LSH has a partial of about zero and, when it has no
	// features, a sparse similarity of zero: hi stays below any threshold.
	return cand{o, partial - scoreSlack, hi}, hi >= thr && len(q.feats) > 0
}

// best returns the k best of cands by exact similarity at or above thr, best first. The
// candidates whose upper bound reaches the k-th largest lower bound may enter; of them the
// rescoreFactor·k with the largest lower bounds (all of them, when that is enough, which makes
// the result exact) are scored exactly.
func (b *Builder) best(q *doc, cands []cand, k int, thr float64, sc *scratch) []link {
	if k == 0 || len(cands) == 0 {
		return nil
	}
	cut := max(thr, kthLargestLo(cands, k, sc))
	top := topByLo(cands, cut, rescoreFactor*k, sc.heap[:0])
	sc.heap = top
	out := sc.links[:0]
	for _, c := range top {
		if s := b.exactSpread(q, b.doc(c.to), sc); s >= thr && s > 0 {
			out = append(out, link{c.to, float32(s)})
		}
	}
	sc.links = out
	if len(out) == 0 {
		return nil
	}
	slices.SortFunc(out, b.cmpLinks)
	return slices.Clone(out[:min(k, len(out))])
}

// rescoreFactor times k candidates at most are scored exactly per list.
const rescoreFactor = 3

// topByLo returns up to m candidates with hi >= cut and the largest lower bounds, ties by
// lower doc id, in h (a min-heap by lower bound).
func topByLo(cands []cand, cut float64, m int, h []cand) []cand {
	less := func(x, y cand) bool { return x.lo < y.lo || (x.lo == y.lo && x.to > y.to) }
	for _, c := range cands {
		switch {
		case c.hi < cut:
		case len(h) < m:
			h = append(h, c)
			for i := len(h) - 1; i > 0 && less(h[i], h[(i-1)/2]); i = (i - 1) / 2 {
				h[i], h[(i-1)/2] = h[(i-1)/2], h[i]
			}
		case less(h[0], c):
			h[0] = c
			heapDown(h, less)
		}
	}
	return h
}

func heapDown(h []cand, less func(x, y cand) bool) {
	for i := 0; ; {
		m, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && less(h[l], h[m]) {
			m = l
		}
		if r < len(h) && less(h[r], h[m]) {
			m = r
		}
		if m == i {
			return
		}
		h[m], h[i] = h[i], h[m]
		i = m
	}
}

// exact is the similarity of q and o rounded to float32, the value an edge carries: the cosine
// of their embeddings when both have one of the same length, else of their TF-IDF vectors.
// It is symmetric to the last bit.
func (b *Builder) exact(q, o *doc) float64 {
	var s float64
	if q.emb != nil && o.emb != nil && len(q.emb) == len(o.emb) {
		s = floats.Dot(q.emb, o.emb)
	} else {
		s = sparseDot(q, o)
	}
	return float64(float32(min(s, 1)))
}

// exactSpread is exact(q, o) with q's weights spread in sc (see scratch.spread): the same
// products summed in the same (feature) order, so the same value to the bit, without merging
// two sorted lists.
func (b *Builder) exactSpread(q, o *doc, sc *scratch) float64 {
	if q.emb != nil && o.emb != nil && len(q.emb) == len(o.emb) {
		return b.exact(q, o)
	}
	s := 0.0
	for j, f := range o.feats {
		if qw := sc.qw[f]; qw != 0 {
			s += float64(qw) * float64(o.w[j])
		}
	}
	return float64(float32(min(s, 1)))
}

// spread writes q's weights into the dense per-feature array qw (of nf features) for
// exactSpread; unspread clears them again.
func (sc *scratch) spread(q *doc, nf int) {
	if len(sc.qw) < nf {
		sc.qw = make([]float32, nf)
	}
	for i, f := range q.feats {
		sc.qw[f] = q.w[i]
	}
}

func (sc *scratch) unspread(q *doc) {
	for _, f := range q.feats {
		sc.qw[f] = 0
	}
}

func (b *Builder) cmpLinks(x, y link) int {
	if b.better(x, y) {
		return -1
	}
	if b.better(y, x) {
		return 1
	}
	return 0
}

// gather accumulates the partial dot products of doc id with every doc sharing one of its
// features that are not capped (found in at most MaxDF docs); the capped rest of two vectors
// adds at most the product of their left-out norms. Features are walked rarest first; once
// the norm of the features still to walk is below the least threshold, a doc not reached yet
// cannot reach that threshold through them alone (the All-Pairs prefix bound), so the rest
// only adds to docs already reached. A doc with only capped features scans the first MaxDF
// postings of its rarest feature.
func (b *Builder) gather(id int32, sc *scratch) {
	d := b.doc(id)
	open := sc.open[:0]
	rest2, rarest := 0.0, -1
	for i, f := range d.feats {
		if !b.capped[f] {
			open = append(open, i)
			rest2 += float64(d.w[i]) * float64(d.w[i])
		} else if rarest < 0 || len(b.post[f]) < len(b.post[d.feats[rarest]]) {
			rarest = i
		}
	}
	sc.open = open
	if len(open) == 0 && rarest >= 0 {
		ps := b.post[d.feats[rarest]]
		b.scan(id, d.w[rarest], ps[:min(len(ps), b.opt.MaxDF)], sc)
		return
	}
	slices.SortFunc(open, func(x, y int) int { return len(b.post[d.feats[x]]) - len(b.post[d.feats[y]]) })
	floor := b.minThreshold()
	floor *= floor
	for _, i := range open {
		ps := b.post[d.feats[i]]
		if rest2 < floor {
			b.scanReached(id, d.w[i], ps, sc)
		} else {
			b.scan(id, d.w[i], ps, sc)
		}
		rest2 -= float64(d.w[i]) * float64(d.w[i])
	}
}

// minThreshold is the least similarity any edge needs (+Inf when no edges are made).
func (b *Builder) minThreshold() float64 {
	return min(b.threshold(0, 0), b.threshold(0, 1))
}

// scanReached adds to the partial products of docs already reached only.
func (b *Builder) scanReached(id int32, w float32, ps []posting, sc *scratch) {
	for _, p := range ps {
		if p.doc != id && sc.acc[p.doc] != 0 {
			sc.acc[p.doc] += w * p.w
		}
	}
}

func (b *Builder) scan(id int32, w float32, ps []posting, sc *scratch) {
	for _, p := range ps {
		if p.doc != id {
			sc.add(p.doc, w*p.w)
		}
	}
}

// gatherLSH marks as candidates the docs that share an LSH bucket with doc id's embedding.
func (b *Builder) gatherLSH(id int32, sc *scratch) {
	d := b.doc(id)
	if d.emb == nil {
		return
	}
	for _, k := range b.lsh.keys(d.emb) {
		ps := b.lsh.buckets[k]
		for _, o := range ps[:min(len(ps), b.opt.MaxDF)] {
			if o != id {
				sc.add(o, 1e-30)
			}
		}
	}
}

// threshold is the least similarity of an edge between docs of envs a and b, or +Inf when such
// edges are disabled.
func (b *Builder) threshold(a, c int32) float64 {
	if a == c {
		if b.opt.K == 0 {
			return math.Inf(1)
		}
		return b.opt.MinSim
	}
	if b.opt.KCross == 0 {
		return math.Inf(1)
	}
	return b.opt.MinSimCross
}

// sparseDot is the dot product of two TF-IDF vectors, summed in feature order so that it is
// symmetric to the last bit.
func sparseDot(a, b *doc) float64 {
	s := 0.0
	i, j := 0, 0
	for i < len(a.feats) && j < len(b.feats) {
		switch {
		case a.feats[i] < b.feats[j]:
			i++
		case a.feats[i] > b.feats[j]:
			j++
		default:
			s += float64(a.w[i]) * float64(b.w[j])
			i++
			j++
		}
	}
	return s
}

// kthLargestLo is the k-th largest lower bound of cands, or -Inf when there are fewer.
func kthLargestLo(cands []cand, k int, sc *scratch) float64 {
	if len(cands) < k {
		return math.Inf(-1)
	}
	h := sc.los[:0] // min-heap of the k largest so far
	defer func() { sc.los = h }()
	for _, c := range cands {
		if len(h) < k {
			h = append(h, c.lo)
			siftUp(h, len(h)-1)
		} else if c.lo > h[0] {
			h[0] = c.lo
			siftDown(h, 0)
		}
	}
	return h[0]
}

func siftUp(h []float64, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h[p] <= h[i] {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func siftDown(h []float64, i int) {
	for {
		m, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && h[l] < h[m] {
			m = l
		}
		if r < len(h) && h[r] < h[m] {
			m = r
		}
		if m == i {
			return
		}
		h[m], h[i] = h[i], h[m]
		i = m
	}
}
