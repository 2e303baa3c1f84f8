package batcher

import (
	"fmt"
	"math"
	"testing"
)

// realShaped is a catalogue shaped like a real agent benchmark's: 41 environments of a few
// to over a thousand tasks (a handful of tiny ones, a block of fifties, some hundreds, three
// giants). Built here, so that no test needs the real catalogue.
func realShaped() []int {
	sizes := []int{10, 16, 18, 20, 24, 30}
	for range 14 {
		sizes = append(sizes, 50)
	}
	sizes = append(sizes, 97, 100, 100, 100, 100, 114, 123, 134)
	for range 7 {
		sizes = append(sizes, 200)
	}
	return append(sizes, 240, 258, 400, 635, 882, 1053)
}

// owedRun chooses steps batches of size on a cold world of the given sizes, storing each the
// way the database stores an answer (every pick counts one Chosen and sets LastChosen), and
// returns the step at which each environment first got a pick (0: never) and the batches'
// random and chosen picks.
func owedRun(t *testing.T, sizes []int, size, steps int, p Params) (first []int, random, chosen int) {
	t.Helper()
	w := sizedColdWorld(t, sizes)
	first = make([]int, len(sizes))
	for n := 1; n <= steps; n++ {
		req := Request{Size: size, GroupSize: 8, Step: int64(n), Seed: uint64(7000 + n)}
		b := w.sel(t, req, p)
		checkBatch(t, w, req, p, b)
		for _, pk := range b.Picks {
			w.tasks[pk.Node].Chosen++
			w.tasks[pk.Node].LastChosen = req.Step
			if e := w.g.Nodes[pk.Node].Env; first[e] == 0 {
				first[e] = n
			}
			if pk.Random {
				random++
			} else {
				chosen++
			}
		}
	}
	return first, random, chosen
}

// TestOwedRandomSlotsReachEveryEnvironment: on a catalogue shaped like the real one, with the
// minimum (half the uniform share) below one slot at B = 32 and 64, the old rule leaves its
// small environments out of every batch; with RandomOwed every environment gets a pick within
// ⌈environments / random slots⌉ steps, and the batches hold as many random and as many
// chosen picks as without it (the owed slots are random slots, not chosen ones).
func TestOwedRandomSlotsReachEveryEnvironment(t *testing.T) {
	sizes := realShaped()
	for _, size := range []int{32, 64} {
		t.Run(fmt.Sprintf("B=%d", size), func(t *testing.T) {
			const steps = 40
			old := DefaultParams()
			old.RandomOwed = false
			oldFirst, oldRandom, oldChosen := owedRun(t, sizes, size, steps, old)
			starved := 0
			for _, f := range oldFirst {
				if f == 0 {
					starved++
				}
			}
			if starved == 0 {
				t.Fatalf("the world does not show the defect: without RandomOwed every environment got a pick in %d steps", steps)
			}
			p := DefaultParams()
			first, random, chosen := owedRun(t, sizes, size, steps, p)
			within := int(math.Ceil(float64(len(sizes)) / float64(p.randomSlots(size))))
			for e, f := range first {
				if f == 0 || f > within {
					t.Errorf("env%d (%d tasks): first pick at step %d, want within %d (without RandomOwed %d of %d environments never had one)",
						e, sizes[e], f, within, starved, len(sizes))
				}
			}
			if random != oldRandom || chosen != oldChosen {
				t.Errorf("random/chosen picks %d/%d, without RandomOwed %d/%d", random, chosen, oldRandom, oldChosen)
			}
		})
	}
}

// TestOwedSlotsKeepUp: over many batches an owed environment keeps getting slots (it is not
// served once and forgotten), the fewest chosen first, and one whose quota gives it slots is
// never owed one. Here 31 small environments share 2 random slots a batch at B = 40: each is
// owed 0.24 slots a batch, more than the random slots can pay, so each gets about 2/31 a batch
// and none falls more than one slot behind another.
func TestOwedSlotsKeepUp(t *testing.T) {
	sizes := make([]int, 41)
	for e := range sizes {
		sizes[e] = 10
		if e < 10 {
			sizes[e] = 500
		}
	}
	w := sizedColdWorld(t, sizes)
	p := DefaultParams()
	got := make([]int, len(sizes))
	for n := 1; n <= 93; n++ {
		req := Request{Size: 40, GroupSize: 8, Step: int64(n), Seed: uint64(n)}
		b := w.sel(t, req, p)
		checkBatch(t, w, req, p, b)
		for _, pk := range b.Picks {
			w.tasks[pk.Node].Chosen++
			w.tasks[pk.Node].LastChosen = req.Step
			e := w.g.Nodes[pk.Node].Env
			got[e]++
			if e >= 10 && !pk.Random {
				t.Fatalf("batch %d: a small environment's task chosen by score, not by an owed slot: %+v", n, pk)
			}
		}
	}
	lo, hi := math.MaxInt, 0
	for e := 10; e < len(sizes); e++ {
		lo, hi = min(lo, got[e]), max(hi, got[e])
	}
	if lo != 6 || hi != 6 { // 93 batches × 2 slots = 186 = 31 × 6
		t.Errorf("small environments got %d to %d picks in 93 batches, want 6 each", lo, hi)
	}
}

// TestOwedNeedsMinimum: with MinShare 0 no environment is owed anything, and the random slots
// are drawn as without RandomOwed: the same batch.
func TestOwedNeedsMinimum(t *testing.T) {
	w := sizedColdWorld(t, realShaped())
	p := DefaultParams()
	p.MinShare = 0
	off := p
	off.RandomOwed = false
	req := Request{Size: 64, GroupSize: 8, Step: 1, Seed: 11}
	a, b := w.sel(t, req, p), w.sel(t, req, off)
	if fmt.Sprint(a.Picks) != fmt.Sprint(b.Picks) {
		t.Errorf("MinShare 0: RandomOwed changed the batch")
	}
}
