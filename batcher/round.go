package batcher

import (
	"fmt"
	"math"

	"github.com/envsched/envsched/internal/par"
)

// round chooses k distinct tasks (k <= eligible) and appends them to the picks. Its cost
// depends on k, the active environments and the neighbours of the tasks it takes, not on the
// size of the graph: a batch of 100,000 repeats over a few eligible tasks is many rounds.
func (s *selector) round(k int, repeat bool) {
	s.reset()
	quota := s.roundQuotas(k)
	n := s.p.randomSlots(k)
	if s.p.RandomOwed {
		n -= s.owedSlots(n, k, quota)
	}
	random := s.randomSlots(n, quota)
	s.greedy(quota, repeat)
	for _, i := range random {
		s.pick(int(i), true, repeat)
	}
}

// randomSlots is the number of random slots of a round of k: round(RandomShare·RandomReturn·k),
// at least one when round(RandomShare·k) is, at most k.
func (p Params) randomSlots(k int) int {
	n := int(math.Round(p.RandomShare * p.RandomReturn * float64(k)))
	if n < 1 && math.Round(p.RandomShare*float64(k)) >= 1 {
		n = 1
	}
	return min(n, k)
}

// reset forgets the takes and penalties of the previous round.
func (s *selector) reset() {
	for _, i := range s.touched {
		s.pen[i], s.taken[i] = 0, false
	}
	s.touched = s.touched[:0]
	s.resetWords()
}

// roundQuotas gives each environment its slots of a round of k: first its minimum (with
// MinCredit, one more for those behind the minimum over the batches so far), then one
// slot at a time to the environment furthest below its target share, up to its maximum; if
// the maxima leave slots over (the other environments ran out of tasks), up to its eligible
// tasks.
func (s *selector) roundQuotas(k int) []int {
	active := len(s.active)
	total, sizes := 0.0, 0.0
	for _, e := range s.active {
		total += s.envValue[e]
		sizes += math.Pow(float64(s.quotas[e].Eligible), s.p.QuotaSize)
	}
	quota := s.quota
	left := k
	for _, e := range s.active {
		q := &s.quotas[e]
		even := math.Pow(float64(q.Eligible), s.p.QuotaSize) / sizes // 1/active when QuotaSize is 0
		q.Share = even
		if total > 0 {
			q.Share = (1-s.p.QuotaSmoothing)*s.envValue[e]/total + s.p.QuotaSmoothing*even
		}
		q.Min = min(q.Eligible, int(math.Floor(s.p.MinShare*float64(k)/float64(active))))
		q.Max = min(q.Eligible, max(q.Min, int(math.Ceil(s.p.MaxShare*float64(k)))))
		if active == 1 {
			q.Max = q.Eligible
		}
		quota[e] = q.Min
		left -= q.Min
	}
	if s.p.MinCredit {
		left = s.creditMinima(quota, left, k)
	}
	left = s.fill(quota, left, k, func(q Quota) int { return q.Max })
	s.fill(quota, left, k, func(q Quota) int { return q.Eligible })
	for _, e := range s.active {
		s.quotas[e].Slots += quota[e]
	}
	return quota
}

// fill hands out left slots one at a time to the environment with the largest shortfall
// against its target share of k, while it is below bound; it returns the slots it could not
// place.
func (s *selector) fill(quota []int, left, k int, bound func(Quota) int) int {
	h := &heap{}
	for _, e := range s.active {
		if quota[e] < bound(s.quotas[e]) {
			h.push(s.shortfall(e, quota[e], k))
		}
	}
	for left > 0 && h.len() > 0 {
		e := int(h.pop().node)
		quota[e]++
		left--
		if quota[e] < bound(s.quotas[e]) {
			h.push(s.shortfall(e, quota[e], k))
		}
	}
	return left
}

func (s *selector) shortfall(e, q, k int) entry {
	return entry{gain: s.quotas[e].Share*float64(k) - float64(q), key: mix(s.req.Seed + uint64(e)), node: int32(e)}
}

// randomSlots draws up to n eligible tasks uniformly (a partial Fisher-Yates shuffle), each
// from an environment with quota left, and marks them taken.
func (s *selector) randomSlots(n int, quota []int) []int32 {
	if n == 0 {
		return nil
	}
	pool := shuffle{base: s.elig}
	var out []int32
	for t := 0; t < len(s.elig) && len(out) < n; t++ {
		j := t + s.rng.IntN(len(s.elig)-t)
		pool.swap(t, j)
		i := pool.at(t)
		e := s.g.Nodes[i].Env
		if quota[e] == 0 {
			continue
		}
		quota[e]--
		out = append(out, i)
		s.take(int(i))
	}
	return out
}

// shuffle is the pool of a partial Fisher-Yates shuffle of base that copies nothing while it
// is small: the positions it swapped hold their values in moved, the others still base's.
// Past a share of base's length it copies base once and goes on in place. A round's few
// random slots so cost their draws, not a copy of every eligible task.
type shuffle struct {
	base  []int32
	moved map[int]int32
	full  []int32 // base with the swaps applied, once copied
}

func (sh *shuffle) at(k int) int32 {
	if sh.full != nil {
		return sh.full[k]
	}
	if v, ok := sh.moved[k]; ok {
		return v
	}
	return sh.base[k]
}

func (sh *shuffle) swap(t, j int) {
	if sh.full == nil && len(sh.moved) >= max(64, len(sh.base)/32) {
		sh.full = append([]int32(nil), sh.base...)
		for k, v := range sh.moved {
			sh.full[k] = v
		}
		sh.moved = nil
	}
	if sh.full != nil {
		sh.full[t], sh.full[j] = sh.full[j], sh.full[t]
		return
	}
	if sh.moved == nil {
		sh.moved = map[int]int32{}
	}
	vt, vj := sh.at(t), sh.at(j)
	sh.moved[t], sh.moved[j] = vj, vt
}

// take marks node i chosen and raises the penalty of its neighbours.
func (s *selector) take(i int) {
	s.taken[i] = true
	s.touched = append(s.touched, int32(i))
	s.takeWords(i)
	for _, e := range s.g.Neighbors(i) {
		if e.Sim > s.pen[e.To] {
			if s.pen[e.To] == 0 {
				s.touched = append(s.touched, e.To)
			}
			s.pen[e.To] = e.Sim
		}
	}
}

func (s *selector) gain(i int32) float64 {
	return orLowest(s.score[i] - s.penalty(i))
}

// orLowest is x, or −∞ when x is NaN. A NaN gain compares unequal to itself, so the lazy
// greedy, which puts back a candidate whose stored gain is not its gain now, put it back for
// ever; and it orders no heap. −∞ is the last of every order, and equal to itself.
func orLowest(x float64) float64 {
	if x != x {
		return math.Inf(-1)
	}
	return x
}

// bound is what a heap stores for candidate i when it is put in: its gain, but for the word
// overlap, which only lowers it. A stored gain need only bound the gain now (greedy takes a
// popped candidate only when its stored gain is current, else puts it back at its gain), so the
// picks are those of exact gains, and the overlap is worked out only for the candidates that
// come near the top, not for every task of a heap made whole.
func (s *selector) bound(i int32) float64 {
	return orLowest(s.score[i] - s.p.SimPenalty*float64(s.pen[i]))
}

// penalty is what the round's taken tasks cost candidate i: SimPenalty times its largest
// similarity to one of them, plus Overlap times the share of its words they hold. It only
// grows as tasks are taken, so a stored gain bounds the gain now.
func (s *selector) penalty(i int32) float64 {
	p := s.p.SimPenalty * float64(s.pen[i])
	if s.words != nil {
		p += s.p.Overlap * s.overlap(i)
	}
	return p
}

// greedy fills the quotas by lazy greedy selection. Each environment keeps a max-heap of its
// candidates by gain; a top-level heap holds each environment by the stored gain of its top.
// Penalties only grow, so a stored gain is an upper bound: a popped entry whose gain is still
// current is the best candidate of all. A pruned heap (see candidateHeaps) holds only an
// environment's best candidates: its top is taken only when it also comes before the best
// candidate left out, else the environment's heap is made whole first, so that the picks are
// those of whole heaps.
func (s *selector) greedy(quota []int, repeat bool) {
	envHeaps := s.candidateHeaps(quota)
	top := &heap{}
	for _, e := range s.active {
		if h := &envHeaps[e]; h.len() > 0 {
			top.push(s.envTop(int32(e)))
		}
	}
	for top.len() > 0 {
		ent := top.pop()
		e := ent.node
		h := &envHeaps[e]
		best := h.peek()
		if g := s.gain(best.node); g != best.gain {
			h.replaceTop(entry{gain: g, key: best.key, node: best.node})
			top.push(s.envTop(e))
			continue
		}
		if s.pruned[e] && !best.before(s.leftOut[e]) {
			s.wholeHeap(e)
			top.push(s.envTop(e))
			continue
		}
		h.pop()
		s.pick(int(best.node), false, repeat) // before take: the penalty is of the tasks taken before it
		s.take(int(best.node))
		quota[e]-- // a pruned heap keeps more candidates than its quota: it never runs out first
		if quota[e] > 0 && h.len() > 0 {
			top.push(s.envTop(e))
		}
	}
}

// envTop is environment e's entry in the top-level heap: the stored gain of its heap's top, or
// of its best candidate left out when that comes first (the entry must bound every candidate
// of e, else another environment's pick could come before a better one left out).
func (s *selector) envTop(e int32) entry {
	t := s.heaps[e].peek()
	if s.pruned[e] && s.leftOut[e].before(t) {
		t = s.leftOut[e]
	}
	return entry{gain: t.gain, key: t.key, node: e}
}

// pruneFactor and pruneExtra size a pruned heap: an environment with quota q keeps its best
// pruneFactor·q + pruneExtra candidates, room for the picks and for the neighbours their
// penalties push down. An environment with fewer than twice that keeps them all.
const (
	pruneFactor = 2
	pruneExtra  = 16
)

// candidateHeaps returns per active environment with quota left a heap of its untaken
// eligible tasks, all in one backing array (indexed by environment; others are not set). An
// environment with many more candidates than its quota gets a pruned heap: its best
// candidates only, found in one pass with a small heap of the worst kept on top (heapifying
// every candidate of a 100,000-task catalogue was most of a round's cost), with the best of
// those left out in leftOut.
func (s *selector) candidateHeaps(quota []int) []heap {
	hs := s.heaps
	off, start, work := 0, 0, 0
	todo := s.todo[:0]
	for _, e := range s.active {
		n := s.quotas[e].Eligible
		s.runs[e] = [2]int{start, start + n}
		start += n
		hs[e] = heap{items: s.items[off:off:off]}
		s.pruned[e] = false
		if quota[e] == 0 {
			continue
		}
		hs[e].items = s.items[off : off : off+n]
		off += n
		todo = append(todo, e)
		work += n
	}
	s.todo = todo
	// Each environment's heap is its own (its items, pruned and leftOut slots): large
	// rounds make them on every CPU, with the same result.
	build := func(lo, hi int) {
		for _, e := range todo[lo:hi] {
			if keep := pruneFactor*quota[e] + pruneExtra; s.quotas[e].Eligible >= 2*keep {
				s.prunedHeap(e, keep)
			} else {
				s.fillHeap(e)
			}
		}
	}
	if work >= valueChunk {
		par.Ranges(len(todo), 2, build)
	} else {
		build(0, len(todo))
	}
	return hs
}

// fillHeap makes environment e's heap of all its untaken eligible tasks at their gains now.
func (s *selector) fillHeap(e int) {
	h := &s.heaps[e]
	h.items = h.items[:0]
	r := s.runs[e]
	for _, i := range s.elig[r[0]:r[1]] {
		if !s.taken[i] {
			h.items = append(h.items, entry{gain: s.bound(i), key: s.key(i), node: i})
		}
	}
	h.init()
}

// wholeHeap makes a pruned heap whole: every untaken candidate of e at its gain now.
func (s *selector) wholeHeap(e int32) {
	s.pruned[e] = false
	s.fillHeap(int(e))
}

// prunedHeap makes environment e's heap of its best keep untaken candidates, and leftOut[e]
// the best of the others (a heap of the worst kept on top decides in one comparison for most
// candidates).
func (s *selector) prunedHeap(e, keep int) {
	h := &s.heaps[e]
	h.items = h.items[:0]
	var out entry
	outSet := false
	leave := func(x entry) {
		if !outSet || x.before(out) {
			out, outSet = x, true
		}
	}
	r := s.runs[e]
	for _, i := range s.elig[r[0]:r[1]] {
		if s.taken[i] {
			continue
		}
		x := entry{gain: s.bound(i), key: s.key(i), node: i}
		switch {
		case len(h.items) < keep:
			h.items = append(h.items, x)
			worstUp(h.items, len(h.items)-1)
		case x.before(h.items[0]):
			leave(h.items[0])
			h.items[0] = x
			worstDown(h.items, 0)
		default:
			leave(x)
		}
	}
	h.init()
	s.pruned[e], s.leftOut[e] = outSet, out
}

// worstUp and worstDown keep items a heap with its worst entry (the last in the order of
// before) at the top.
func worstUp(items []entry, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !items[p].before(items[i]) {
			return
		}
		items[i], items[p] = items[p], items[i]
		i = p
	}
}

func worstDown(items []entry, i int) {
	n := len(items)
	for {
		worst, l := i, 2*i+1
		if l < n && items[worst].before(items[l]) {
			worst = l
		}
		if r := l + 1; r < n && items[worst].before(items[r]) {
			worst = r
		}
		if worst == i {
			return
		}
		items[i], items[worst] = items[worst], items[i]
		i = worst
	}
}

// pick appends node i with its numbers and reason.
func (s *selector) pick(i int, random, repeat bool) {
	v := s.values(i)
	p := Pick{
		Node: i, Exploit: v.exploit, Coverage: s.p.CoverageWeight * v.coverage(),
		Penalty: s.penalty(int32(i)), Random: random, Repeat: repeat,
	}
	if random {
		// A random slot was drawn before any greedy pick: nothing penalised it.
		p.Penalty = 0
	}
	p.Score = p.Exploit + p.Coverage - p.Penalty
	p.Reason = reason(v, p, s.p.CoverageWeight)
	s.picks = append(s.picks, p)
}

// ReasonRandom is the reason of every random slot, and of nothing else.
const ReasonRandom = "random slot"

// exploitReasons are the reasons of a pick chosen for its exploitation value, by the measure
// that valued it (values.measure): a high value (0.5 or more), and the best value left. A
// graded task valued by its chance of an informative group was said to have "high predicted
// variance" beside a predicted variance of 0.002.
var exploitReasons = map[Exploit][2]string{
	ExploitVariance:    {"high predicted variance", "best predicted variance left"},
	ExploitInformative: {"likely informative group", "best informative chance left"},
	ExploitMatched:     {"likely informative group", "best informative chance left"},
	ExploitSpread:      {"high predicted spread", "best predicted spread left"},
	ExploitLasting:     {"likely to stay informative", "best lasting chance left"},
}

// reason says in a few words what made the task worth its slot.
func reason(v values, p Pick, beta float64) string {
	switch {
	case p.Random:
		return ReasonRandom
	case p.Repeat:
		return "repeat: fewer eligible tasks than size"
	case v.newEnv:
		return "new environment; env prior"
	case v.neverTried && v.borrowed:
		return "never tried; neighbours' evidence"
	case v.neverTried:
		return "never tried; env prior"
	case p.Exploit >= p.Coverage && p.Exploit >= 0.5:
		return exploitReasons[v.measure][0]
	case p.Exploit >= p.Coverage:
		return exploitReasons[v.measure][1]
	case beta*0.25*v.stale >= beta*0.5*v.uncertain && !v.chosenBefore:
		return "not chosen before"
	case beta*0.25*v.stale >= beta*0.5*v.uncertain:
		return fmt.Sprintf("stale: not chosen for %d steps", v.roundsSinceChosen)
	}
	return "uncertain: few observations"
}
