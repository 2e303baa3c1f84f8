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
