package graph

import (
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/envsched/envsched/record"
)

// NodeKey names a node: an (environment, task) pair.
type NodeKey struct{ Env, Task string }

// NamedEdge is an edge to a neighbour named by key rather than by snapshot index, the form in
// which adjacency is persisted.
type NamedEdge struct {
	Env, Task string
	Weight    float32 // Sim for intra-environment edges, CrossWeight × Sim for Cross edges
	Sim       float32 // the similarity, in (0, 1]
	Cross     bool    // the neighbour is in another environment
}

// link is one neighbour by document id with the similarity the edge was made from.
type link struct {
	to  int32
	sim float32
}

// doc is one node of the builder, with its feature vector and its neighbour picks.
type doc struct {
	key     NodeKey
	env     int32     // index into Builder.envNames
	indexed bool      // in the posting lists and LSH buckets (at most once; index is a no-op then)
	hash    uint64    // of the task's content; an unchanged re-add is a no-op
	feats   []int32   // feature ids, ascending
	raw     []float32 // weight of each feature before IDF
	w       []float32 // unit-length TF-IDF weights, parallel to feats
	emb     []float64 // unit-length embedding, nil when none was given
	left2   float64   // squared norm of the weights of capped features
	intra   []link    // own picks in its environment, best first, at most K
	cross   []link    // own picks in other environments, best first, at most KCross
	in      []link    // docs that picked this one, unordered
}

// docBlocks holds the docs in blocks of fixed size: growing never copies the docs already
// held (a single slice of a million docs briefly needs its old and new arrays, hundreds of
// megabytes, while it grows).
type docBlocks struct {
	blocks [][]doc
	len    int
}

// docBlock is how many docs one block holds.
const docBlock = 1 << 12

func (s *docBlocks) push(d doc) {
	if s.len%docBlock == 0 {
		s.blocks = append(s.blocks, make([]doc, 0, docBlock))
	}
	last := len(s.blocks) - 1
	s.blocks[last] = append(s.blocks[last], d)
	s.len++
}

// doc returns the doc of id, which must be below n().
func (b *Builder) doc(id int32) *doc { return &b.docs.blocks[id/docBlock][id%docBlock] }

// n is the number of docs.
func (b *Builder) n() int { return b.docs.len }

func (d *doc) described() bool { return len(d.feats) > 0 || d.emb != nil }

// docMeta is doc.left2 and doc.env side by side, for the candidate loop: one cache line read
// per candidate rather than two.
type docMeta struct {
	left2 float64
	env   int32
}

// posting is one entry of a feature's posting list.
type posting struct {
	doc int32
	w   float32
}

// Builder builds the dual-relation graph incrementally. It is not safe for concurrent use; a
// Snapshot is immutable and may be shared freely.
//
// Similarity is the cosine of TF-IDF vectors of the task's words, tools and tags (tools and
// tags are distinct features with ToolWeight and TagWeight), or the cosine of the given
// embeddings when both tasks have one of the same length. Candidates come from an inverted
// index (posting lists of features found in at most MaxDF tasks) and, for embeddings, from
// random-hyperplane LSH buckets; only candidates are scored exactly, never all pairs.
//
// Determinism: the same sequence of Add calls gives the same graph, and a single Add (or any
// Add that triggers a full build) gives a graph that depends only on the set of tasks, not on
// their order. At start, re-Add the stored catalogue in one call: it gives exactly the edges
// of a fresh build of that catalogue.
type Builder struct {
	opt      Options
	docs     docBlocks
	meta     []docMeta // what the candidate loop reads of each doc, kept compact
	sorted   []int32   // every doc id sorted by key, when it has as many as there are docs
	byKey    map[NodeKey]int32
	envID    map[string]int32
	envNames []string
	featID   map[string]int32
	df       []int32   // how many described docs have each feature
	idf      []float64 // NaN until the feature's weight is fixed
	capped   []bool    // found in more than MaxDF docs: not scanned for candidates (sticky)
	toCap    []int32   // features that crossed MaxDF during this Add
	post     [][]posting
	lsh      lshIndex
	nDesc    int              // described docs
	builtAt  int              // nDesc at the last full build
	before   map[int32][]link // adjacency before the pending Flush first changed it
	dirty    *idSet           // docs to score at the next Flush; nil when nothing is staged
	newFrom  int32            // docs from this id on are new since the last Flush (fresh) while staging
	dropped  bool             // DropIndex ran: the builder only answers about the graph it holds
}

// NewBuilder returns an empty builder. Zero fields of opt take their defaults; a field that
// Options.Validate rejects is replaced by its default, so validate options from users first.
func NewBuilder(opt Options) *Builder {
	opt = sanitize(opt)
	return &Builder{
		opt:    opt,
		byKey:  map[NodeKey]int32{},
		envID:  map[string]int32{},
		featID: map[string]int32{},
		lsh:    newLSHIndex(),
	}
}

func sanitize(o Options) Options {
	o = o.withDefaults()
	def := DefaultOptions()
	if !unit(o.MinSim) {
		o.MinSim = def.MinSim
	}
	if !unit(o.MinSimCross) {
		o.MinSimCross = def.MinSimCross
	}
	if !unit(o.CrossWeight) {
		o.CrossWeight = def.CrossWeight
	}
	if o.MaxDF < 1 {
		o.MaxDF = def.MaxDF
	}
	if o.ToolWeight <= 0 {
		o.ToolWeight = def.ToolWeight
	}
	if o.TagWeight <= 0 {
		o.TagWeight = def.TagWeight
	}
	if o.RefreshGrowth < 0 {
		o.RefreshGrowth = def.RefreshGrowth
	}
	o.Workers = max(o.Workers, 0)
	return o
}

// Options returns the options in effect, defaults filled in.
func (b *Builder) Options() Options { return b.opt }

// Len is the number of nodes.
func (b *Builder) Len() int { return b.n() }

// Add adds tasks, or replaces the description of tasks already known (a task first seen in
// rollouts, with no text, gets its description later this way). Adding an unchanged task is a
// no-op. A task with no text, tools, tags or embedding is a node with no similarity edges; its
// tie to its environment is implicit. Rows with an empty Env or Task are ignored; of two rows
// with the same key the later wins.
//
// It returns the keys, sorted by environment then task, of every new node and of every
// existing node whose adjacency (see Adjacency) changed, so that the caller can persist them
// in the transaction that stores the tasks.
//
// Add scores only the new and changed tasks against the index, unless the number of described
// tasks has grown by more than RefreshGrowth since the last full build: then it rebuilds all
// vectors with fresh IDF weights and all neighbour lists (amortised linear).
func (b *Builder) Add(tasks []record.Task) (changed []NodeKey) {
	b.Stage(tasks)
	return b.Flush()
}

// Stage registers tasks as Add does, but scores nothing: the neighbour lists are brought up to
// date only at the next Flush. Stage(a); Stage(b); Flush() gives the graph and the changed keys of Add(a ∪ b),
// the rows of b winning over those of a for the same key. It lets a caller feed a catalogue in
// pieces as it reads it (only each task's features are kept, not its text) and build once.
func (b *Builder) Stage(tasks []record.Task) {
	if b.dropped {
		panic("graph: Stage or Add after DropIndex")
	}
	if b.dirty == nil {
		b.before, b.dirty = map[int32][]link{}, &idSet{}
		b.newFrom = int32(b.n())
	}
	rows := canonical(tasks)
	feats := b.featuresOf(rows)
	for i, t := range rows {
		b.upsert(t, feats[i], b.dirty)
	}
}

// IsNew reports whether key is a node that the staging of the last (or pending) Flush added.
func (b *Builder) IsNew(key NodeKey) bool {
	id, ok := b.byKey[key]
	return ok && id >= b.newFrom
}

// Keys returns the key of every node, sorted by environment then task.
func (b *Builder) Keys() []NodeKey {
	ids := b.allSorted()
	keys := make([]NodeKey, len(ids))
	for i, id := range ids {
		keys[i] = b.doc(id).key
	}
	return keys
}

// DropIndex frees what scoring new tasks needs (posting lists, LSH buckets, every task's
// features, weights and embedding, the feature dictionary) and keeps the graph: Len, Keys,
// IsNew, Adjacency and Snapshot answer as before. At a million tasks that is hundreds of
// megabytes a one-shot ingest no longer holds while it stores the edge lists. Stage and Add
// panic afterwards, and a Flush with something staged must come before it (Flush then panics);
// a caller that needs to add tasks again builds a new Builder.
func (b *Builder) DropIndex() {
	if b.dirty != nil {
		panic("graph: DropIndex with tasks staged")
	}
	b.dropped = true
	for i := range b.docs.blocks {
		for j := range b.docs.blocks[i] {
			d := &b.docs.blocks[i][j]
			d.feats, d.raw, d.w, d.emb, d.indexed = nil, nil, nil, nil, false
		}
	}
	b.post, b.lsh, b.meta, b.featID = nil, lshIndex{}, nil, nil
	b.df, b.idf, b.capped, b.toCap = nil, nil, nil, nil
}

// Staged reports whether tasks were staged since the last Flush.
func (b *Builder) Staged() bool { return b.dirty != nil }

// Unbucketed returns the embedding lengths the hyperplane bound (maxPlaneFloats) left out of
// the LSH index since its last full build, each with the rows of it added: their embeddings are
// compared only with the candidates text, tools and tags find. Nil when every length is
// bucketed (or the index was dropped).
func (b *Builder) Unbucketed() map[int]int {
	if len(b.lsh.leftOut) == 0 {
		return nil
	}
	return maps.Clone(b.lsh.leftOut)
}

// Flush scores what Stage registered since the last Flush (see Add) and returns the keys, sorted
// by environment then task, of every new node and of every node whose adjacency changed.
func (b *Builder) Flush() (changed []NodeKey) {
	if b.dirty == nil {
		return nil
	}
	// A feature that crossed MaxDF while staging and came back under it (a replaced row) is not
	// capped: the same as one Add of the final rows.
	b.toCap = slices.DeleteFunc(b.toCap, func(f int32) bool { return int(b.df[f]) <= b.opt.MaxDF })
	if b.nDesc > 0 && (float64(b.nDesc) > float64(b.builtAt)*(1+b.opt.RefreshGrowth) || 2*len(b.dirty.ids) > b.n()) {
		// Grown past RefreshGrowth, or most docs to score again (a catalogue rewritten with
		// new texts): scoring the dirty docs one by one against the index held every result
		// at once and cost more than a build of everything (52,432 tasks rewritten: 19 s and
		// 1.5 GB against 13 s and 0.4 GB fresh).
		b.fullBuild()
	} else {
		b.incremental(b.sortedIDs(b.dirty.ids))
	}
	changed = b.changedKeys()
	b.before, b.dirty, b.toCap = nil, nil, nil
	return changed
}

// canonical sorts tasks by key and keeps the last row of each key, so that the order of rows
// within one Add does not matter.
func canonical(tasks []record.Task) []record.Task {
	out := make([]record.Task, 0, len(tasks))
	for _, t := range tasks {
		if t.Env != "" && t.Task != "" {
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out, func(a, b record.Task) int {
		return compareKey(NodeKey{a.Env, a.Task}, NodeKey{b.Env, b.Task})
	})
	keep := out[:0]
	for i, t := range out {
		if i+1 < len(out) && out[i+1].Env == t.Env && out[i+1].Task == t.Task {
			continue
		}
		keep = append(keep, t)
	}
	return keep
}

func compareKey(a, b NodeKey) int {
	if c := strings.Compare(a.Env, b.Env); c != 0 {
		return c
	}
	return strings.Compare(a.Task, b.Task)
}

// upsert adds t as a new doc or replaces a changed doc's content, marking what must be
// scored again in dirty.
func (b *Builder) upsert(t record.Task, raw []rawFeature, dirty *idSet) {
	key := NodeKey{t.Env, t.Task}
	h := contentHash(t)
	id, ok := b.byKey[key]
	if ok && b.doc(id).hash == h {
		return
	}
	if ok {
		b.detach(id, dirty)
	} else {
		id = b.newDoc(key)
	}
	b.doc(id).hash = h
	b.setContent(id, t, raw)
	dirty.add(id)
}

func (b *Builder) newDoc(key NodeKey) int32 {
	env, ok := b.envID[key.Env]
	if !ok {
		env = int32(len(b.envNames))
		b.envID[key.Env] = env
		b.envNames = append(b.envNames, key.Env)
	}
	key.Env = b.envNames[env] // one copy of each environment's name, not one a task
	id := int32(b.n())
	b.docs.push(doc{key: key, env: env})
	b.meta = append(b.meta, docMeta{env: env})
	b.byKey[key] = id
	return id
}

// setContent registers the features raw of t for doc id and counts their document frequency.
// The weights are computed later, once every task of the Add is counted.
func (b *Builder) setContent(id int32, t record.Task, raw []rawFeature) {
	d := b.doc(id)
	d.feats, d.raw, d.w = make([]int32, len(raw)), make([]float32, len(raw)), nil
	for i, f := range raw {
		d.feats[i], d.raw[i] = b.feature(f.name), float32(f.w)
	}
	sortParallel(d.feats, d.raw)
	for _, f := range d.feats {
		b.df[f]++
		if int(b.df[f]) == b.opt.MaxDF+1 && !b.capped[f] {
			b.toCap = append(b.toCap, f)
		}
	}
	d.emb = unitEmbedding(t.Embedding)
	if d.described() {
		b.nDesc++
	}
}

func (b *Builder) feature(name string) int32 {
	if f, ok := b.featID[name]; ok {
		return f
	}
	f := int32(len(b.df))
	b.featID[name] = f
	b.df = append(b.df, 0)
	b.idf = append(b.idf, math.NaN())
	b.capped = append(b.capped, false)
	b.post = append(b.post, nil)
	return f
}

// sortParallel sorts feats ascending and raw along with it.
func sortParallel(feats []int32, raw []float32) {
	idx := make([]int, len(feats))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return int(feats[a]) - int(feats[b]) })
	f2, r2 := slices.Clone(feats), slices.Clone(raw)
	for i, j := range idx {
		feats[i], raw[i] = f2[j], r2[j]
	}
}

// detach removes doc id from the index and from every neighbour list; docs that had picked it
// must find new neighbours and become dirty.
func (b *Builder) detach(id int32, dirty *idSet) {
	d := b.doc(id)
	b.touch(id)
	for _, f := range d.feats {
		b.df[f]--
		if d.indexed {
			b.post[f] = removePosting(b.post[f], id)
		}
	}
	if d.emb != nil && d.indexed {
		b.lsh.remove(id, d.emb)
	}
	d.indexed = false
	if d.described() {
		b.nDesc--
	}
	b.setPicks(id, nil, nil)
	for _, l := range slices.Clone(d.in) {
		o := b.doc(l.to)
		b.touch(l.to)
		o.intra, o.cross = dropLink(o.intra, id), dropLink(o.cross, id)
		dirty.add(l.to)
	}
	d.in = nil
	d.feats, d.raw, d.w, d.emb = nil, nil, nil, nil
}

func removePosting(ps []posting, id int32) []posting {
	for i, p := range ps {
		if p.doc == id {
			return slices.Delete(ps, i, i+1)
		}
	}
	return ps
}

func dropLink(ls []link, id int32) []link {
	return slices.DeleteFunc(ls, func(l link) bool { return l.to == id })
}

func (b *Builder) sortedIDs(set []int32) []int32 {
	ids := slices.Clone(set)
	slices.SortFunc(ids, b.compareDocs)
	return ids
}

// fresh reports whether doc id is new since the last Flush (only while staging or flushing).
func (b *Builder) fresh(id int32) bool { return b.dirty != nil && id >= b.newFrom }

// idSet is a set of doc ids: a flag per id and the ids in order of addition (a map of a
// million ids costs tens of megabytes; this a byte and four a doc).
type idSet struct {
	has []bool
	ids []int32
}

func (s *idSet) add(id int32) {
	if int(id) >= len(s.has) {
		n := max(int(id)+1, 2*len(s.has))
		s.has = slices.Grow(s.has, n-len(s.has))[:n]
	}
	if !s.has[id] {
		s.has[id] = true
		s.ids = append(s.ids, id)
	}
}

func (b *Builder) compareDocs(x, y int32) int { return compareKey(b.doc(x).key, b.doc(y).key) }

// better orders neighbour candidates: higher similarity first, ties by node order.
func (b *Builder) better(x, y link) bool {
	if x.sim != y.sim {
		return x.sim > y.sim
	}
	return b.compareDocs(x.to, y.to) < 0
}
