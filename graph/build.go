package graph

import (
	"math"

	"github.com/envsched/envsched/record"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// idfOf is the smoothed inverse document frequency of a feature in df of n documents.
func idfOf(n, df int) float64 { return math.Log(float64(1+n)/float64(1+df)) + 1 }

// weigh computes the unit-length TF-IDF weights of doc id from its raw weights. Features whose
// IDF is not fixed yet get it from their current frequency and the document count of the last
// full build.
func (b *Builder) weigh(id int32) {
	d := b.doc(id)
	if len(d.w) != len(d.feats) {
		d.w = make([]float32, len(d.feats))
	}
	ss, left := 0.0, 0.0
	for i, f := range d.feats {
		if math.IsNaN(b.idf[f]) {
			b.idf[f] = idfOf(max(b.builtAt, b.nDesc), int(b.df[f]))
		}
		v := float64(d.raw[i]) * b.idf[f]
		ss += v * v
		if b.capped[f] {
			left += v * v
		}
	}
	d.left2 = left / ss
	b.meta[id].left2 = d.left2
	inv := 1 / math.Sqrt(ss)
	for i, f := range d.feats {
		v := float64(d.raw[i]) * b.idf[f]
		d.w[i] = float32(v * inv)
	}
}

// index adds doc id, weighted, to the posting lists and LSH buckets, unless it is there
// already: a doc scored again only because a neighbour changed keeps its entries (its
// weights are the same: the IDF of a feature is fixed once set).
func (b *Builder) index(id int32) {
	d := b.doc(id)
	if d.indexed {
		return
	}
	d.indexed = true
	for i, f := range d.feats {
		b.post[f] = append(b.post[f], posting{id, d.w[i]})
	}
	if d.emb != nil {
		b.lsh.add(id, d.emb)
	}
}

// fullBuild recomputes every IDF weight, the whole index and every neighbour list. It visits
// docs in key order so that the result does not depend on the order of insertion.
func (b *Builder) fullBuild() {
	for id := range b.n() {
		if !b.fresh(int32(id)) {
			b.touch(int32(id))
		}
	}
	b.resetPostings()
	for f := range b.idf {
		b.idf[f] = idfOf(b.nDesc, int(b.df[f]))
		b.capped[f] = int(b.df[f]) > b.opt.MaxDF
	}
	b.lsh = newLSHIndex()
	order := b.allSorted()
	lengths := map[int]int{}
	for _, id := range order {
		if d := b.doc(id); d.emb != nil {
			lengths[len(d.emb)]++
		}
	}
	b.lsh.reserve(lengths)
	b.weightBlock(order)
	for _, id := range order {
		d := b.doc(id)
		d.intra, d.cross, d.in, d.indexed = nil, nil, nil, false
		if len(d.feats) > 0 {
			b.weigh(id)
		}
		b.index(id)
	}
	// Each worker stores a doc's picks itself, in that doc alone (no list of all results).
	b.queryEach(order, false, func(i int, r queryResult) {
		d := b.doc(order[i])
		d.intra, d.cross = r.intra, r.cross
	})
	b.linkIn(order)
	b.builtAt = b.nDesc
}

// linkIn records, after a full build, every pick of the docs of order (in that order) in the
// in-list of its target. The lists are cut from one array sized by the in-degrees: a million
// lists grown one append at a time left about as much garbage as they hold, at the end of the
// build, when the process's memory peaks.
func (b *Builder) linkIn(order []int32) {
	deg := make([]int32, b.n())
	total := 0
	for _, id := range order {
		d := b.doc(id)
		for _, l := range d.intra {
			deg[l.to]++
		}
		for _, l := range d.cross {
			deg[l.to]++
		}
		total += len(d.intra) + len(d.cross)
	}
	all := make([]link, total)
	at := 0
	for id, n := range deg {
		if n > 0 {
			b.doc(int32(id)).in = all[at : at : at+int(n)]
			at += int(n)
		}
	}
	for _, id := range order {
		d := b.doc(id)
		for _, l := range d.intra {
			t := b.doc(l.to)
			t.in = append(t.in, link{id, l.sim})
		}
		for _, l := range d.cross {
			t := b.doc(l.to)
			t.in = append(t.in, link{id, l.sim})
		}
	}
}

// resetPostings empties every posting list, laying them out in one array with room for exactly
// each feature's document frequency: the lists a full build indexes fit without growing (an
// incremental Add that outgrows a list moves that list alone).
func (b *Builder) resetPostings() {
	total := 0
	for _, n := range b.df {
		total += int(n)
	}
	all := make([]posting, total)
	at := 0
	for f, n := range b.df {
		b.post[f] = all[at : at : at+int(n)]
		at += int(n)
	}
}

// weightBlock gives the docs of ids that have no weight slice of the right length one, all cut
// from a single array, so that a full build does not allocate a small slice per doc.
func (b *Builder) weightBlock(ids []int32) {
	total := 0
	for _, id := range ids {
		if d := b.doc(id); len(d.w) != len(d.feats) {
			total += len(d.feats)
		}
	}
	all := make([]float32, total)
	at := 0
	for _, id := range ids {
		if d := b.doc(id); len(d.w) != len(d.feats) {
			n := len(d.feats)
			d.w = all[at : at+n : at+n]
			at += n
		}
	}
}

// allSorted returns every doc id sorted by key. The slice is kept until a doc is added (keys
// never change and docs are only appended), so that a full build, its changed keys and Keys
// sort a million keys once; callers must not modify it.
func (b *Builder) allSorted() []int32 {
	if len(b.sorted) == b.n() {
		return b.sorted
	}
	ids := make([]int32, b.n())
	for i := range ids {
		ids[i] = int32(i)
	}
	slices.SortFunc(ids, b.compareDocs)
	b.sorted = ids
	return ids
}

// incremental weighs and indexes the dirty docs, finds their neighbours, then offers each of
// them to the neighbour lists of the clean docs it was scored against.
func (b *Builder) incremental(dirty []int32) {
	for _, f := range b.toCap {
		b.capFeature(f)
	}
	for _, id := range dirty {
		if len(b.doc(id).feats) > 0 {
			b.weigh(id)
		}
		b.index(id)
	}
	res := b.queryAll(dirty, true)
	isDirty := make(map[int32]bool, len(dirty))
	for i, id := range dirty {
		isDirty[id] = true
		b.setPicks(id, res[i].intra, res[i].cross)
	}
	for i, id := range dirty {
		for _, c := range res[i].cands {
			if !isDirty[c.to] {
				b.offer(c.to, id, c)
			}
		}
	}
}

// queryAll scores ids in parallel; the index is only read meanwhile.
func (b *Builder) queryAll(ids []int32, keepCands bool) []queryResult {
	res := make([]queryResult, len(ids))
	b.queryEach(ids, keepCands, func(i int, r queryResult) { res[i] = r })
	return res
}

// queryEach scores ids in parallel and hands the result for ids[i] to put(i, r), called from
// several goroutines at once, once for each i; the index is only read meanwhile.
func (b *Builder) queryEach(ids []int32, keepCands bool, put func(i int, r queryResult)) {
	scs := make([]*scratch, b.workers(len(ids)))
	for w := range scs {
		scs[w] = &scratch{acc: make([]float32, b.n())}
	}
	b.parallel(len(ids), func(w, i int) {
		put(i, b.query(ids[i], scs[w], keepCands))
	})
}

// picks returns the doc's own picks, intra then cross.
func (b *Builder) picks(id int32) []link {
	d := b.doc(id)
	return append(slices.Clip(d.intra), d.cross...)
}

// setPicks replaces the own picks of id and keeps the in-links of their targets in step.
func (b *Builder) setPicks(id int32, intra, cross []link) {
	b.touch(id)
	for _, l := range b.picks(id) {
		b.touch(l.to)
		t := b.doc(l.to)
		t.in = dropLink(t.in, id)
	}
	d := b.doc(id)
	d.intra, d.cross = intra, cross
	for _, l := range b.picks(id) {
		b.touch(l.to)
		t := b.doc(l.to)
		t.in = append(t.in, link{id, l.sim})
	}
}

// offer puts doc qid, a candidate of c with similarity bounds qc, into the neighbour list of c
// if it is among c's best.
func (b *Builder) offer(c, qid int32, qc cand) {
	d := b.doc(c)
	list, k, thr := &d.intra, b.opt.K, b.opt.MinSim
	if b.doc(qid).env != d.env {
		list, k, thr = &d.cross, b.opt.KCross, b.opt.MinSimCross
	}
	n := len(*list)
	if k == 0 || (n >= k && qc.hi < float64((*list)[n-1].sim)) ||
		slices.ContainsFunc(*list, func(l link) bool { return l.to == qid }) {
		return
	}
	s := b.exact(b.doc(qid), d)
	q := link{qid, float32(s)}
	if s < thr || s <= 0 || (n >= k && !b.better(q, (*list)[n-1])) {
		return
	}
	b.touch(c)
	b.touch(q.to)
	pos, _ := slices.BinarySearchFunc(*list, q, func(e, t link) int {
		if b.better(e, t) {
			return -1
		}
		return 1
	})
	*list = slices.Insert(*list, pos, q)
	b.doc(q.to).in = append(b.doc(q.to).in, link{c, q.sim})
	if len(*list) > k {
		ev := (*list)[k]
		*list = (*list)[:k]
		b.touch(ev.to)
		e := b.doc(ev.to)
		e.in = dropLink(e.in, c)
	}
}

// touch records the adjacency of id before this Add first changes it.
func (b *Builder) touch(id int32) {
	if _, ok := b.before[id]; !ok {
		b.before[id] = b.adjacency(id)
	}
}

// adjacency is the symmetric neighbour list of id: its own picks and the docs that picked it,
// by ascending id, each once.
func (b *Builder) adjacency(id int32) []link {
	d := b.doc(id)
	all := make([]link, 0, len(d.intra)+len(d.cross)+len(d.in))
	all = append(append(append(all, d.intra...), d.cross...), d.in...)
	slices.SortFunc(all, func(x, y link) int { return int(x.to) - int(y.to) })
	return slices.CompactFunc(all, func(x, y link) bool { return x.to == y.to })
}

func (b *Builder) changedKeys() []NodeKey {
	var ids []int32
	for id, old := range b.before {
		if b.fresh(id) || !slices.Equal(old, b.adjacency(id)) {
			ids = append(ids, id)
		}
	}
	for id := b.newFrom; int(id) < b.n(); id++ {
		if _, ok := b.before[id]; !ok {
			ids = append(ids, id)
		}
	}
	if len(ids) == b.n() {
		ids = b.allSorted() // every doc changed (each id once): the cached order
	} else {
		slices.SortFunc(ids, b.compareDocs)
	}
	keys := make([]NodeKey, len(ids))
	for i, id := range ids {
		keys[i] = b.doc(id).key
	}
	return keys
}

// capFeature stops scanning feature f for candidates and moves its weight, in the docs already
// indexed, into their left-out norm so that the candidate bound stays sound.
func (b *Builder) capFeature(f int32) {
	if b.capped[f] {
		return
	}
	b.capped[f] = true
	for _, p := range b.post[f] {
		b.doc(p.doc).left2 += float64(p.w) * float64(p.w)
		b.meta[p.doc].left2 = b.doc(p.doc).left2
	}
}

// featuresOf tokenises rows in parallel: it is pure and a large share of a full build.
func (b *Builder) featuresOf(rows []record.Task) [][]rawFeature {
	out := make([][]rawFeature, len(rows))
	b.parallel(len(rows), func(_, i int) {
		out[i] = taskFeatures(rows[i], b.opt.ToolWeight, b.opt.TagWeight)
	})
	return out
}

// workers is how many goroutines work on n items.
func (b *Builder) workers(n int) int {
	if n < 64 {
		return 1
	}
	if b.opt.Workers > 0 {
		return b.opt.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// parallel runs f(worker, i) for i in 0..n-1 on b.workers(n) goroutines.
func (b *Builder) parallel(n int, f func(worker, i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range b.workers(n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(w, i)
			}
		})
	}
	wg.Wait()
}
