package batcher

import (
	"cmp"
	"math"
	"slices"
)

// creditMinima raises by one the minimum of some environments when the minimum of this round
// of k, m = MinShare·k/active, is not a whole number (MinCredit), so that the minimum is
// honoured over batches instead of rounded down in each. An environment is behind when its
// picks so far (C) and floor(m) fall short of MinShare·(T+k)/active, its minimum over the T
// picks so far among the active environments and this round; of those behind, the ones chosen
// the fewest times get a slot more each (ties by the seeded hash), at most
// round-up(active·(m − floor(m))) of them, the fractional parts summed. quota holds each
// active environment's floor(m) (or all its eligible tasks, and then it needs no more); it
// returns the slots left.
//
// The counts are derived from the statistics alone (the times each task was chosen, which
// every stored answer adds to), not from a state of the scheduler's own, so an answer stays a
// function of the database and the request. An environment that nothing else gives a slot
// so has, after N batches of the same size, at least floor(N·m) picks and about N·m; one the
// shares favour is ahead and gets none of these slots. The minima together never take more
// than round-up(MinShare·k) slots.
func (s *selector) creditMinima(quota []int, left, k int) int {
	active := len(s.active)
	m := s.p.MinShare * float64(k) / float64(active)
	floor := math.Floor(m)
	extra := int(math.Ceil(float64(active)*(m-floor) - 1e-9))
	if extra <= 0 || left <= 0 {
		return left
	}
	chosen := s.envChosen()
	picks := func(e int) int64 { return chosen[e] + int64(s.quotas[e].Slots) } // earlier rounds of this batch count too
	total := int64(0)
	for _, e := range s.active {
		total += picks(e)
	}
	due := s.p.MinShare * float64(total+int64(k)) / float64(active) // each one's minimum over the batches so far and this round
	var open []int
	for _, e := range s.active {
		if quota[e] == int(floor) && quota[e] < s.quotas[e].Eligible && float64(picks(e))+floor < due {
			open = append(open, e)
		}
	}
	slices.SortFunc(open, func(a, b int) int {
		if c := cmp.Compare(picks(a), picks(b)); c != 0 {
			return c
		}
		return cmp.Compare(mix(s.req.Seed+uint64(a)), mix(s.req.Seed+uint64(b)))
	})
	for _, e := range open[:min(len(open), extra, left)] {
		quota[e]++
		q := &s.quotas[e]
		q.Min++
		q.Max = max(q.Max, q.Min)
		left--
	}
	return left
}

// envChosen is, per environment, the times its tasks were chosen in stored batches (the sum of
// stats.Task.Chosen), worked out once per Select.
func (s *selector) envChosen() []int64 {
	if s.chosen == nil {
		s.chosen = make([]int64, len(s.g.Envs))
		for i, nd := range s.g.Nodes {
			s.chosen[nd.Env] += s.tasks[i].Chosen
		}
	}
	return s.chosen
}

// owedSlots gives environments owed a slot one slot each of the quota of a round of k, and
// returns how many it gave: at most n − 1 of the round's n random slots (all of them when n is
// 1), so that a round that has random slots keeps one drawn at random whenever it can (what
// random slots return and how degenerate random choice is stay measured). An environment is
// owed a slot when the round's quotas left it none (its minimum, MinShare·k/active, rounded to
// nothing and no share big enough for a slot) and its tasks were chosen fewer times than
// MinShare of the uniform share of all the picks so far (the statistics' Chosen counts, and
// this batch's slots up to this round); the fewest chosen first, ties by the seeded hash. Its
// task is then chosen like any other, the best of the environment by gain. Each slot is paid
// by the environment with the most slots over its minimum (see payer), so a round has as many
// slots chosen by gain as before (one random slot fewer for each owed one) and no environment
// falls below its minimum.
//
// Like creditMinima it reads the statistics alone, so an answer stays a function of the
// database and the request.
func (s *selector) owedSlots(n, k int, quota []int) int {
	limit := n
	if n >= 2 {
		limit = n - 1
	}
	if limit == 0 {
		return 0
	}
	owed := s.owedEnvs(quota)
	given := 0
	for _, o := range owed[:min(len(owed), limit)] {
		payer := s.payer(quota, k)
		if payer < 0 {
			break
		}
		quota[payer]--
		quota[o]++
		s.quotas[payer].Slots--
		s.quotas[o].Slots++
		given++
	}
	return given
}

// owedEnvs lists the active environments owed a slot in this round (see owedSlots), the
// fewest chosen first. The quotas' Slots already hold this round's.
func (s *selector) owedEnvs(quota []int) []int {
	if !slices.ContainsFunc(s.active, func(e int) bool { return quota[e] == 0 }) {
		return nil // every environment has a slot: no need of the counts
	}
	chosen := s.envChosen()
	picks := func(e int) int64 { return chosen[e] + int64(s.quotas[e].Slots) }
	total := int64(0)
	for _, e := range s.active {
		total += picks(e)
	}
	due := s.p.MinShare * float64(total) / float64(len(s.active))
	var owed []int
	for _, e := range s.active {
		if quota[e] == 0 && float64(picks(e)) < due {
			owed = append(owed, e)
		}
	}
	slices.SortFunc(owed, func(a, b int) int {
		if c := cmp.Compare(picks(a), picks(b)); c != 0 {
			return c
		}
		return cmp.Compare(mix(s.req.Seed+uint64(a)), mix(s.req.Seed+uint64(b)))
	})
	return owed
}

// payer is the active environment with the most slots of the round over its minimum (ties:
// the one furthest above its target share of the round of k, then the seeded hash), or −1
// when none has a slot over its minimum. A slot taken from the biggest quota costs that
// environment a small part of its share; one taken from an environment that rounding lifted
// to one slot would leave it without.
func (s *selector) payer(quota []int, k int) int {
	best, bestSpare, bestOver, bestKey := -1, 0, 0.0, uint64(0)
	for _, e := range s.active {
		q := s.quotas[e]
		spare := quota[e] - q.Min
		if spare <= 0 {
			continue
		}
		over, key := float64(quota[e])-q.Share*float64(k), mix(s.req.Seed+uint64(e))
		if best < 0 || spare > bestSpare || spare == bestSpare && (over > bestOver || over == bestOver && key < bestKey) {
			best, bestSpare, bestOver, bestKey = e, spare, over, key
		}
	}
	return best
}
