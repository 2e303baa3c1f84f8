package propagate

import (
	"fmt"
	"math"
	"testing"

	"github.com/envsched/envsched/stats"
)

// TestFirstAnswerSaysTheStartChance (Params.StartDegenerate): while nothing is measured, the
// answer for a pick of a task never tried at mean ½ with nothing behind it says its group
// comes back all-equal with the start's chance, whatever the group size and κ, selection's
// pick and random slot alike; what selection reads keeps DispersionStart (count
// κ·DispersionStart). Groups of 2, which no count makes all-equal with chance below ½, keep
// selection's prediction.
func TestFirstAnswerSaysTheStartChance(t *testing.T) {
	g := star(2, 0.5)
	for _, kappa := range []float64{0.5, 2, 100} {
		for _, gs := range []int{2, 3, 4, 8, 16, 64} {
			name := fmt.Sprintf("κ %v, groups of %d", kappa, gs)
			p := DefaultParams()
			p.Kappa, p.GroupSize = kappa, gs
			pr, err := NewPredictor(p)
			if err != nil {
				t.Fatal(err)
			}
			preds, _, err := pr.Predict(g, make([]stats.Task, 3), 1, State{})
			if err != nil {
				t.Fatal(err)
			}
			sel := preds[0]
			if math.Abs(sel.Count()-kappa*p.DispersionStart) > 1e-9 {
				t.Errorf("%s: selection reads count %v, want κ·DispersionStart %v", name, sel.Count(), kappa*p.DispersionStart)
			}
			for _, random := range []bool{false, true} {
				got := pr.Pick(State{}, sel, false, random)
				want := p.StartDegenerate
				if gs == 2 {
					want = sel.PDeg
				}
				if math.Abs(got.PDeg-want) > 1e-6 || math.Abs(got.Mean-0.5) > 1e-9 {
					t.Errorf("%s, random %v: answered p_degenerate %v mean %v, want %v at ½", name, random, got.PDeg, got.Mean, want)
				}
			}
		}
	}
}

// TestFirstAnswerKeepsBorrowedEvidence: the answer's start sets the prior's part κ of a count,
// not the evidence a task never tried borrowed from its neighbours (a folder of earlier
// rollouts ingested before the first request): its count is the uncorrected one less κ plus
// the start's count, its mean unchanged. Scaling the whole count instead would take a task
// borrowing 4 rollouts' worth down to a third of them.
func TestFirstAnswerKeepsBorrowedEvidence(t *testing.T) {
	g := star(2, 0.5)
	tasks := make([]stats.Task, 3)
	for r := range int64(3) {
		rollGroup(&tasks[1], 1+r, 1, 1, 1, 0, 1, 1, 0, 1)
		rollGroup(&tasks[2], 1+r, 1, 0, 1, 1, 1, 0, 1, 1)
	}
	off := DefaultParams()
	off.DispersionMemory = 0
	p := DefaultParams()
	pr, err := NewPredictor(p)
	if err != nil {
		t.Fatal(err)
	}
	raw := mustPredict(t, g, tasks, 5, off)[0]
	preds, st, err := pr.Predict(g, tasks, 5, State{})
	if err != nil {
		t.Fatal(err)
	}
	if raw.Borrowed <= 0 || raw.Count() <= 2*p.Kappa {
		t.Fatalf("the centre borrows too little to tell: %+v", raw)
	}
	c, _ := p.startCount(p.GroupSize)
	got := pr.Pick(st, preds[0], false, false)
	if want := raw.Count() - p.Kappa + c; math.Abs(got.Count()-want) > 1e-9 || math.Abs(got.Mean-raw.Mean) > 1e-9 {
		t.Errorf("count %.4f mean %.4f; want %.4f and %.4f (uncorrected count %.4f, start count %.4f)",
			got.Count(), got.Mean, want, raw.Mean, raw.Count(), c)
	}
}

// TestStartOnlyWhileNothingIsMeasured: once groups of tasks never tried have been measured,
// an untried pick is answered by its measured correction, not the start.
func TestStartOnlyWhileNothingIsMeasured(t *testing.T) {
	g := star(2, 0.5)
	p := DefaultParams()
	pr, err := NewPredictor(p)
	if err != nil {
		t.Fatal(err)
	}
	st := State{Dispersion: Dispersion{Global: &Likelihood{LL: make([]float64, len(dispersionGrid)), N: 64}}}
	preds, next, err := pr.Predict(g, make([]stats.Task, 3), 1, st)
	if err != nil {
		t.Fatal(err)
	}
	noStart := p
	noStart.StartDegenerate = 0
	prNo, _ := NewPredictor(noStart)
	if got, want := pr.Pick(next, preds[0], false, false), prNo.Pick(next, preds[0], false, false); got != want {
		t.Errorf("measured: answered %+v, without the start %+v", got, want)
	}
}

// TestNeverTriedFactorMeasuresTheStartOfItsGroupSize: the first request's untried picks are
// measured by the never-tried factor as they were answered, with the start of their own
// group's size, whatever the group size of the request that measures them.
func TestNeverTriedFactorMeasuresTheStartOfItsGroupSize(t *testing.T) {
	p := DefaultParams()
	p.GroupSize = 8 // the measuring request's
	var d drift
	d.start(State{}, p)
	d.matchNew([]group{{b: Baseline{Env: "e", Pred: 0.5, Count: p.Kappa}, k: 16, n: 16}})
	if len(d.disp.NewPending) != 1 {
		t.Fatalf("pending %+v, want the one group", d.disp.NewPending)
	}
	want, _ := p.startCount(16)
	if got := d.disp.NewPending[0].Count; math.Abs(got-want) > 1e-9 {
		t.Errorf("a group of 16 measured with count %v, want the start's for 16, %v (for 8: %v)", got, want, func() float64 { c, _ := p.startCount(8); return c }())
	}
}
