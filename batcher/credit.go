package batcher

import (
	"cmp"
	"math"
	"slices"
)

// creditMinima raises by one the minimum of some environments when the minimum of this round
// of k, m = MinShare·k/active, is not a whole number (MinCredit), so that the minimum is
// honoured over batches instead of rounded down in each: the fractional parts summed,
// round-up(active·(m − floor(m))) slots, go a slot each to the environments whose tasks were
// chosen the fewest times so far (ties by the seeded hash). quota holds each active
// environment's floor(m) (or all its eligible tasks, and then it needs no more); it returns
// the slots left.
//
// The count is derived from the statistics alone (the times each task was chosen, which
// every stored answer adds to), not from a state of the scheduler's own, so an answer stays a
// function of the database and the request. The slots more go round the environments that
// nothing else gives a slot, so after N batches of the same size each of them has at least
// floor(N·m) picks; an environment the shares favour is ahead and gets none. The minima
// together never take more than round-up(MinShare·k) slots.
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
	var open []int
	for _, e := range s.active {
		if quota[e] == int(floor) && quota[e] < s.quotas[e].Eligible {
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
