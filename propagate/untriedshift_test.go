package propagate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// laggingWorld is untriedCurseWorld with its level moved: every a task (rolled out in order,
// as random slots are) a coin, the b tasks solved 97 times in 100 (two in three) or 6 in 10,
// 0.85 on average. Selection's untried picks
// are b tasks, predicted from their coin partner and their environment's mean, so their
// predicted mean lags what they return, as the untried tasks of an environment that training
// lifted do (the acceptance harness's agentic world).
func laggingWorld() *untriedCurseWorld {
	w := newUntriedCurseWorld()
	for i := range w.p {
		w.p[i] = 0.5
		if i%2 == 1 {
			w.p[i] = []float64{0.97, 0.97, 0.6}[i/2%3]
		}
	}
	return w
}

// laggingGaps runs laggingWorld for 30 rounds and returns, over selection's untried picks
// of rounds 11-30 as Pick answers them, the mean predicted reward less the mean that came
// back, the mean predicted chance of a degenerate group less the share that came back
// degenerate, and the offset stored at the end.
func laggingGaps(t *testing.T, p Params) (meanGap, degGap, offset float64) {
	w := laggingWorld()
	c := newChain(t, p)
	var pm, rm, pd, rd, n float64
	for round := int64(1); round <= 30; round++ {
		preds, before, picked, st := w.step(t, c, round)
		c.st = roundTrip(t, c.st)
		if round <= 10 {
			continue
		}
		for _, i := range picked {
			q := c.pr.Pick(st, preds[i], false, false)
			s := w.tasks[i].Sum - before[i].Sum
			pm, rm, pd = pm+q.Mean, rm+s/8, pd+q.PDeg
			if s == 0 || s == 8 {
				rd++
			}
			n++
		}
	}
	return (pm - rm) / n, (pd - rd) / n, c.st.Dispersion.NewOffset
}

// TestNeverTriedOffsetFollowsALaggingLevel (Params.NewShift): selection's untried picks
// predicted below what they return are answered at the level that came back, and their
// chance of an all-equal group follows; the count factor alone, with the mean kept, leaves
// both further off.
func TestNeverTriedOffsetFollowsALaggingLevel(t *testing.T) {
	on, off := DefaultParams(), DefaultParams()
	off.NewShift = false
	mOn, dOn, oOn := laggingGaps(t, on)
	mOff, dOff, oOff := laggingGaps(t, off)
	t.Logf("untried picks, rounds 11-30, predicted − realised: with the offset (%.3f) mean %+.3f, degenerate %+.3f; without (%v) mean %+.3f, degenerate %+.3f",
		oOn, mOn, dOn, oOff, mOff, dOff)
	if oOff != 0 {
		t.Errorf("NewShift off: offset %v stored", oOff)
	}
	if mOff > -0.1 {
		t.Fatalf("without the offset the mean gap is %+.3f: the world does not lag as it should", mOff)
	}
	if !(oOn > 0) || math.Abs(mOn) > math.Abs(mOff)/3 {
		t.Errorf("with the offset %.3f the mean gap is %+.3f, without %+.3f: want a positive offset and a third of the gap or less", oOn, mOn, mOff)
	}
	if math.Abs(dOn) >= math.Abs(dOff) {
		t.Errorf("degenerate gap %+.3f with the offset, %+.3f without: want it smaller", dOn, dOff)
	}
}

// TestNeverTriedOffsetStored (Params.NewShift): a Dispersion with a never-tried offset is
// written as version 7, with every field of version 6, and decodes back to itself and to what
// its JSON decodes to; without one it is written in the bytes of the build before.
func TestNeverTriedOffsetStored(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for i := range 300 {
		d := randomDispersion(rng)
		if rng.IntN(2) == 0 {
			d.NewFactor, d.NewPending = 0.5+rng.Float64(), []MatchGroup{{Mean: 0.3, Count: 2, N: 8, K: 1}}
		}
		if rng.IntN(2) == 0 {
			d.RandomFactor, d.RandomWindow = 1.5, []MatchGroup{{Mean: 0.6, Count: 3, N: 8, K: 8}}
		}
		if rng.IntN(2) == 0 {
			d.Graded = &GradedCal{Untried: &Trend{N: 3, Beta: [trendDim]float64{0.1, 0.9}}}
		}
		without, err := d.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		with := d
		with.NewOffset = (rng.Float64()*2 - 1) * newOffsetMax
		if with.NewOffset == 0 {
			with.NewOffset = 0.5
		}
		if got := versionedRoundTrip(t, i, with, without, dispersionVersion7, "the offset"); got.NewOffset != with.NewOffset {
			t.Fatalf("draw %d: offset %v decoded, want %v", i, got.NewOffset, with.NewOffset)
		}
		var back Dispersion
		if err := back.UnmarshalBinary(without); err != nil || back.NewOffset != 0 {
			t.Fatalf("draw %d: without the offset: %v, offset %v", i, err, back.NewOffset)
		}
	}
	// an offset out of its bounds, as another build may have stored, is none
	d := Dispersion{NewOffset: 3 * newOffsetMax}
	if c := d.clone(); c.NewOffset != 0 {
		t.Errorf("offset %v out of bounds kept as %v", d.NewOffset, c.NewOffset)
	}
}

// TestNeverTriedOffsetOnlyMovesUntriedPicks: the offset changes only the answer for an
// untried task that selection picked in a 0/1 environment, its mean and its chance of an
// all-equal group; a random slot, a task tried before and a task of an environment with
// graded rewards are answered as without it; with NewShift off it is not read.
func TestNeverTriedOffsetOnlyMovesUntriedPicks(t *testing.T) {
	p := DefaultParams()
	pr, err := NewPredictor(p)
	if err != nil {
		t.Fatal(err)
	}
	w := newUntriedCurseWorld()
	w.group(0, 1)
	w.group(2, 1)
	preds, st, err := pr.Predict(w.g, w.tasks, 2, State{})
	if err != nil {
		t.Fatal(err)
	}
	preds = clonePreds(preds)
	withO := st
	withO.Dispersion = st.Dispersion.clone()
	withO.Dispersion.NewOffset = 1
	untried := preds[5]
	got, want := pr.Pick(withO, untried, false, false), pr.Pick(st, untried, false, false)
	if !(got.Mean > want.Mean) || got.PDeg == want.PDeg || math.Abs(got.Alpha+got.Beta-(want.Alpha+want.Beta)) > 1e-9 {
		t.Errorf("untried pick with offset 1: mean %v count %v, without %v count %v: want a higher mean, the same count",
			got.Mean, got.Alpha+got.Beta, want.Mean, want.Alpha+want.Beta)
	}
	otherPicksAlike(t, pr, withO, st, untried, preds[0], "the offset")
	off := p
	off.NewShift = false
	prOff, _ := NewPredictor(off)
	if got, want := prOff.Pick(withO, untried, false, false), prOff.Pick(st, untried, false, false); got != want {
		t.Errorf("NewShift off: the offset was read: %+v, want %+v", got, want)
	}
}

// TestNeverTriedOffsetNotFromTheFirstRequest: the first request's groups (measured while
// nothing is, answered at ½ with nothing known) do not move the offset, whatever their mean;
// the factor is measured from them as before. The same groups measured later move it.
func TestNeverTriedOffsetNotFromTheFirstRequest(t *testing.T) {
	var groups []group
	for i := range 16 {
		groups = append(groups, group{b: Baseline{Env: "e", Task: fmt.Sprint(i), Pred: 0.5, Count: 2}, k: int64(7 + i%2), n: 8})
	}
	var d drift
	d.start(State{}, DefaultParams())
	d.matchNew(groups)
	if d.disp.NewOffset != 0 || d.disp.NewFactor == 0 {
		t.Errorf("the first request's groups: offset %v, factor %v; want no offset, a factor", d.disp.NewOffset, d.disp.NewFactor)
	}
	d.disp.Global = &Likelihood{LL: make([]float64, len(dispersionGrid)), N: 16} // something measured
	d.matchNew(groups)
	if !(d.disp.NewOffset > 0) {
		t.Errorf("the same groups after something was measured: offset %v, want it moved up", d.disp.NewOffset)
	}
}

// TestNeverTriedOffsetNotFromTheFirstRequestInTwoParts (review14): the first request's
// groups, answered with the start (Baseline.Start), do not move the offset when they come
// back in two parts, the second after the first has measured something; their factor is
// measured as before. Groups of picks answered after something was measured, coming back
// with them, do move it.
func TestNeverTriedOffsetNotFromTheFirstRequestInTwoParts(t *testing.T) {
	var first []group // the first request's untried picks, all answered at ½, solved 7-8 of 8
	for i := range 24 {
		first = append(first, group{b: Baseline{Env: "e", Task: fmt.Sprint(i), Pred: 0.5, Count: 2, Start: true}, k: int64(7 + i%2), n: 8})
	}
	var d drift
	d.start(State{}, DefaultParams())
	d.measureDispersion(first[:12])
	if d.disp.NewOffset != 0 || !d.disp.Global.measured() {
		t.Fatalf("the first part: offset %v, global measured %v; want 0 and measured", d.disp.NewOffset, d.disp.Global.measured())
	}
	d.measureDispersion(first[12:])
	if d.disp.NewOffset != 0 || d.disp.NewFactor == 0 {
		t.Errorf("the second part of the first request's groups (answered with the start) moved the offset to %v "+
			"(factor %v); want 0 and a factor", d.disp.NewOffset, d.disp.NewFactor)
	}
	later := slices.Clone(first[:12]) // the same groups, of picks answered after: they move it
	for i := range later {
		later[i].b.Start = false
	}
	d.measureDispersion(append(later, first[12:14]...))
	if !(d.disp.NewOffset > 0) {
		t.Errorf("groups of picks answered after something was measured: offset %v, want it moved up", d.disp.NewOffset)
	}
}

// TestStartPendingGroupsStored: which of the never-tried factor's pending groups were
// answered with the start is stored (the dispersion's version 8, written only when one
// was): a restart between a first request's two parts matches them as it would have; a
// version 8 that flags none, or a group it does not hold, is refused.
func TestStartPendingGroupsStored(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for i := range 200 {
		d := randomDispersion(rng)
		d.NewFactor = 0.5 + rng.Float64()
		n := 1 + rng.IntN(minFactorGroups-1)
		for range n {
			d.NewPending = append(d.NewPending, MatchGroup{Mean: 0.2 + 0.6*rng.Float64(), Count: 2, N: 8, K: int64(rng.IntN(9))})
		}
		if rng.IntN(2) == 0 {
			d.NewOffset = 0.25
		}
		without, err := d.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		with := d
		with.NewPending = slices.Clone(d.NewPending)
		with.NewPending[rng.IntN(n)].Start = true
		got := versionedRoundTrip(t, i, with, without, dispersionVersion8, "start groups")
		for k := range got.NewPending {
			if got.NewPending[k].Start != with.NewPending[k].Start {
				t.Fatalf("draw %d: pending group %d decoded with start %v", i, k, got.NewPending[k].Start)
			}
		}
		bin, _ := with.MarshalBinary()
		bad := slices.Clone(bin)
		bad[len(bad)-1] = 0 // version 8 flagging none
		if new(Dispersion).UnmarshalBinary(bad) == nil {
			t.Fatalf("draw %d: a version 8 that flags no group decoded", i)
		}
		bad[len(bad)-1] = 1 << n // a group it does not hold
		if new(Dispersion).UnmarshalBinary(bad) == nil {
			t.Fatalf("draw %d: a version 8 flagging group %d of %d decoded", i, n, n)
		}
	}
}
