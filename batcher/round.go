package batcher

import (
	"fmt"
	"math"
)

// round chooses k distinct tasks (k <= eligible) and appends them to the picks. Its cost
// depends on k, the active environments and the neighbours of the tasks it takes, not on the
// size of the graph: a batch of 100,000 repeats over a few eligible tasks is many rounds.
func (s *selector) round(k int, repeat bool) {
	s.reset()
	quota := s.roundQuotas(k)
	random := s.randomSlots(s.p.randomSlots(k), quota)
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
}

// roundQuotas gives each environment its slots of a round of k: first its minimum, then one
// slot at a time to the environment furthest below its target share, up to its maximum; if
// the maxima leave slots over (the other environments ran out of tasks), up to its eligible
// tasks.
func (s *selector) roundQuotas(k int) []int {
	active := len(s.active)
	total := 0.0
	for _, e := range s.active {
		total += s.envValue[e]
	}
	quota := s.quota
	left := k
	for _, e := range s.active {
		q := &s.quotas[e]
		q.Share = 1 / float64(active)
		if total > 0 {
			q.Share = (1-s.p.QuotaSmoothing)*s.envValue[e]/total + s.p.QuotaSmoothing/float64(active)
		}
		q.Min = min(q.Eligible, int(math.Floor(s.p.MinShare*float64(k)/float64(active))))
		q.Max = min(q.Eligible, max(q.Min, int(math.Ceil(s.p.MaxShare*float64(k)))))
		if active == 1 {
			q.Max = q.Eligible
		}
		quota[e] = q.Min
		left -= q.Min
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
	pool := append([]int32(nil), s.elig...)
	var out []int32
	for t := 0; t < len(pool) && len(out) < n; t++ {
		j := t + s.rng.IntN(len(pool)-t)
		pool[t], pool[j] = pool[j], pool[t]
		i := pool[t]
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

// take marks node i chosen and raises the penalty of its neighbours.
func (s *selector) take(i int) {
	s.taken[i] = true
	s.touched = append(s.touched, int32(i))
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
	return s.score[i] - s.p.SimPenalty*float64(s.pen[i])
}

// greedy fills the quotas by lazy greedy selection. Each environment keeps a max-heap of its
// candidates by gain; a top-level heap holds each environment by the stored gain of its top.
// Penalties only grow, so a stored gain is an upper bound: a popped entry whose gain is still
// current is the best candidate of all.
func (s *selector) greedy(quota []int, repeat bool) {
	envHeaps := s.candidateHeaps(quota)
	top := &heap{}
	for _, e := range s.active {
		if h := &envHeaps[e]; h.len() > 0 {
			top.push(entry{gain: h.peek().gain, key: h.peek().key, node: int32(e)})
		}
	}
	for top.len() > 0 {
		ent := top.pop()
		e := ent.node
		h := &envHeaps[e]
		best := h.peek()
		if g := s.gain(best.node); g != best.gain {
			h.replaceTop(entry{gain: g, key: best.key, node: best.node})
			top.push(entry{gain: h.peek().gain, key: h.peek().key, node: e})
			continue
		}
		h.pop()
		s.take(int(best.node))
		s.pick(int(best.node), false, repeat)
		quota[e]--
		if quota[e] > 0 && h.len() > 0 {
			top.push(entry{gain: h.peek().gain, key: h.peek().key, node: e})
		}
	}
}

// candidateHeaps returns per active environment with quota left a heap of its untaken
// eligible tasks, all in one backing array (indexed by environment; others are not set).
func (s *selector) candidateHeaps(quota []int) []heap {
	hs := s.heaps
	off := 0
	for _, e := range s.active {
		hs[e] = heap{items: s.items[off:off:off]}
		if quota[e] > 0 {
			hs[e].items = s.items[off : off : off+s.quotas[e].Eligible]
			off += s.quotas[e].Eligible
		}
	}
	for _, i := range s.elig {
		e := s.g.Nodes[i].Env
		if quota[e] > 0 && !s.taken[i] {
			hs[e].items = append(hs[e].items, entry{gain: s.gain(i), key: s.key(i), node: i})
		}
	}
	for _, e := range s.active {
		hs[e].init()
	}
	return hs
}

// pick appends node i with its numbers and reason.
func (s *selector) pick(i int, random, repeat bool) {
	v := s.values(i)
	p := Pick{
		Node: i, Exploit: v.exploit, Coverage: s.p.CoverageWeight * v.coverage(),
		Penalty: s.p.SimPenalty * float64(s.pen[i]), Random: random, Repeat: repeat,
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
		return "high predicted variance"
	case p.Exploit >= p.Coverage:
		return "best predicted variance left"
	case beta*0.25*v.stale >= beta*0.5*v.uncertain && !v.chosenBefore:
		return "not chosen before"
	case beta*0.25*v.stale >= beta*0.5*v.uncertain:
		return fmt.Sprintf("stale: not chosen for %d steps", v.roundsSinceChosen)
	}
	return "uncertain: few observations"
}
