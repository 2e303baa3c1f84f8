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
// ⌈environments / owed slots a batch⌉ steps (a round's random slots but one), every batch keeps
// a random slot, and the owed slots come out of the random ones: no fewer picks by gain.
func TestOwedRandomSlotsReachEveryEnvironment(t *testing.T) {
	sizes := realShaped()
	for _, size := range []int{32, 64} {
		t.Run(fmt.Sprintf("B=%d", size), func(t *testing.T) {
			const steps = 60
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
			p.RandomOwed = true
			first, random, chosen := owedRun(t, sizes, size, steps, p)
			within := int(math.Ceil(float64(len(sizes)) / float64(p.randomSlots(size)-1)))
			for e, f := range first {
				if f == 0 || f > within {
					t.Errorf("env%d (%d tasks): first pick at step %d, want within %d (without RandomOwed %d of %d environments never had one)",
						e, sizes[e], f, within, starved, len(sizes))
				}
			}
			if random < steps || random >= oldRandom || chosen > oldChosen+oldRandom-steps {
				t.Errorf("random/chosen picks %d/%d in %d batches, without RandomOwed %d/%d: want a random slot in every batch, the others owed",
					random, chosen, steps, oldRandom, oldChosen)
			}
		})
	}
}

// TestOwedSlotsKeepUp: over many batches an owed environment keeps getting slots (it is not
// served once and forgotten), the fewest chosen first. Here 31 small environments whose quotas
// are always nothing share 1 owed slot a batch at B = 40 (2 random slots, one kept random):
// each is owed 0.24 slots a batch, more than can be paid, so each gets one every 31 batches.
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
	p.RandomOwed = true
	got := make([]int, len(sizes))
	for n := 1; n <= 93; n++ {
		small := 0
		req := Request{Size: 40, GroupSize: 8, Step: int64(n), Seed: uint64(n)}
		b := w.sel(t, req, p)
		checkBatch(t, w, req, p, b)
		for _, pk := range b.Picks {
			w.tasks[pk.Node].Chosen++
			w.tasks[pk.Node].LastChosen = req.Step
			e := w.g.Nodes[pk.Node].Env
			got[e]++
			if e >= 10 {
				small++
			}
		}
		if small != 1 {
			t.Fatalf("batch %d: %d picks of small environments, want the one owed slot", n, small)
		}
	}
	lo, hi := math.MaxInt, 0
	for e := 10; e < len(sizes); e++ {
		lo, hi = min(lo, got[e]), max(hi, got[e])
	}
	if lo != 3 || hi != 3 { // 93 batches × 1 slot = 31 × 3
		t.Errorf("small environments got %d to %d picks in 93 batches, want 3 each", lo, hi)
	}
}

// TestOwedNeedsMinimum: with MinShare 0 no environment is owed anything, and the random slots
// are drawn as without RandomOwed: the same batch.
func TestOwedNeedsMinimum(t *testing.T) {
	w := sizedColdWorld(t, realShaped())
	p := DefaultParams()
	p.MinShare, p.RandomOwed = 0, true
	off := p
	off.RandomOwed = false
	req := Request{Size: 64, GroupSize: 8, Step: 1, Seed: 11}
	a, b := w.sel(t, req, p), w.sel(t, req, off)
	if fmt.Sprint(a.Picks) != fmt.Sprint(b.Picks) {
		t.Errorf("MinShare 0: RandomOwed changed the batch")
	}
}
