package batcher

import (
	"math"
	"sort"
)

// matchedTable inverts, for one group size g, the chance that g rewards of a 0/1 task of
// success chance p are all equal, d(p) = p^g + (1 − p)^g, on p in [0, ½] where it falls from
// 1 to 2·½^g: ExploitMatched values a task whose groups are all-equal with chance d as the
// 0/1 task with the same chance, 4p(1 − p). The table holds d at matchedSteps + 1 evenly
// spaced p and is read by binary search and linear interpolation, so that valuing a node
// costs a few comparisons, not a root search.
type matchedTable struct {
	g int
	d []float64 // d(p_k), p_k = k/(2·matchedSteps), falling
}

const matchedSteps = 512

func newMatchedTable(g int) *matchedTable {
	t := &matchedTable{g: g, d: make([]float64, matchedSteps+1)}
	for k := range t.d {
		p := float64(k) / (2 * matchedSteps)
		t.d[k] = math.Pow(p, float64(g)) + math.Pow(1-p, float64(g))
	}
	return t
}

// value is 4p(1 − p) of the 0/1 task whose groups of g are all-equal with chance d: 0 for
// d >= 1, 1 for d at or below a fair coin's. A group of one is always all-equal: with g < 2
// every task is worth 0, as with ExploitInformative.
func (t *matchedTable) value(d float64) float64 {
	if t.g < 2 || !(d < 1) {
		return 0
	}
	last := len(t.d) - 1
	if d <= t.d[last] {
		return 1
	}
	// The first k with d(p_k) <= d; d(p_{k−1}) > d >= d(p_k).
	k := sort.Search(len(t.d), func(i int) bool { return t.d[i] <= d })
	lo, hi := t.d[k-1], t.d[k]
	p := (float64(k-1) + (lo-d)/(lo-hi)) / (2 * matchedSteps)
	return clamp01(4 * p * (1 - p))
}
