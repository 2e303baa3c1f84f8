package batcher

import (
	"fmt"
	"math"
	"testing"
)

// TestMinimumHonouredOverBatches: with many environments and a small batch the minimum
// (MinShare of the uniform share) is less than a slot. Over N batches, each stored the way the
// database stores an answer (every pick counts one Chosen), every environment still gets at
// least floor(N·minimum) picks, and a batch's minima never take more than round-up(MinShare·B)
// slots. The old rule rounded each batch's minimum down to nothing, and the small environments
// of a catalogue with a few big ones were left out of nearly every batch.
func TestMinimumHonouredOverBatches(t *testing.T) {
	big := func(nBig, sizeBig, nSmall, sizeSmall int) []int {
		var s []int
		for range nBig {
			s = append(s, sizeBig)
		}
		for range nSmall {
			s = append(s, sizeSmall)
		}
		return s
	}
	for _, tc := range []struct {
		sizes    []int
		size     int
		minShare float64
	}{
		{big(10, 500, 31, 10), 64, 0.5}, // 41 environments, 0.78 slots each
		{big(10, 500, 31, 10), 32, 0.5}, // 0.39
		{big(10, 500, 31, 10), 16, 1},   // fewer slots than environments
		{big(3, 300, 17, 12), 50, 0.3},  // 0.75
		{big(2, 400, 5, 3), 40, 0.5},    // 2.86: the whole part as well
	} {
		t.Run(fmt.Sprintf("%d envs B=%d min=%v", len(tc.sizes), tc.size, tc.minShare), func(t *testing.T) {
			w := sizedColdWorld(t, tc.sizes)
			p := DefaultParams()
			p.MinShare, p.MinCredit = tc.minShare, true
			m := tc.minShare * float64(tc.size) / float64(len(tc.sizes))
			const batches = 60
			got := make([]int, len(tc.sizes))
			for n := range batches {
				req := Request{Size: tc.size, GroupSize: 8, Step: int64(n + 1), Seed: uint64(100 + n)}
				b := w.sel(t, req, p)
				checkBatch(t, w, req, p, b)
				mins := 0
				for _, q := range b.Quotas {
					mins += q.Min
				}
				if limit := int(math.Ceil(tc.minShare*float64(tc.size) - 1e-9)); mins > limit {
					t.Fatalf("batch %d: minima take %d slots, more than %d", n, mins, limit)
				}
				for _, pk := range b.Picks {
					w.tasks[pk.Node].Chosen++
					w.tasks[pk.Node].LastChosen = req.Step
					got[w.g.Nodes[pk.Node].Env]++
				}
				for e, c := range got {
					if want := int(math.Floor(float64(n+1)*m + 1e-9)); c < want {
						t.Fatalf("after %d batches env%d (%d tasks) has %d picks, its minimum %.2f a batch owes %d",
							n+1, e, tc.sizes[e], c, m, want)
					}
				}
			}
		})
	}
}

// TestMinimumCreditOff: MinCredit false (the default) is the older rule, the minimum rounded down in each
// batch alone; with a minimum below one slot the small environments then go without.
func TestMinimumCreditOff(t *testing.T) {
	sizes := make([]int, 41)
	for e := range sizes {
		sizes[e] = 10
		if e < 10 {
			sizes[e] = 500
		}
	}
	w := sizedColdWorld(t, sizes)
	p := DefaultParams()
	p.MinCredit = false
	for n := range 3 {
		req := Request{Size: 64, GroupSize: 8, Step: int64(n + 1), Seed: uint64(n)}
		b := w.sel(t, req, p)
		for e, q := range b.Quotas {
			if q.Min != 0 {
				t.Fatalf("credit off: env%d minimum %d, want 0 (0.78 rounded down)", e, q.Min)
			}
		}
		for _, pk := range b.Picks {
			w.tasks[pk.Node].Chosen++
		}
	}
}
