package propagate

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

// borrowMatchGroups are groups of tasks never tried as selection's picks (0/1 environment,
// before anything is measured): 40 with their prior alone (count κ = 2, mean ½), about as
// often all-equal as the start predicts (half), and 16 that borrowed 4 rollouts' worth from
// neighbours (count 6, mean ½: predicted 0.17 all-equal), every one all-equal.
func borrowMatchGroups() []group {
	var out []group
	for i := range 40 {
		k := int64(4)
		if i%2 == 0 {
			k = 8 * int64(i%4/2)
		}
		out = append(out, group{b: Baseline{Env: "e", Pred: 0.5, Count: 2}, k: k, n: 8})
	}
	for i := range 16 {
		out = append(out, group{b: Baseline{Env: "e", Pred: 0.5, Count: 6}, k: 8 * int64(i%2), n: 8})
	}
	return out
}

// TestBorrowedUntriedPicksMatchedApart (Params.BorrowMatch): untried picks that borrowed
// evidence are matched by a factor of their own, which cuts their count more than the one
// factor fitted on every untried pick; the never-tried factor is fitted on the prior-alone
// picks only. Off, no borrowed factor is stored and the one factor sees every group.
func TestBorrowedUntriedPicksMatchedApart(t *testing.T) {
	run := func(borrow bool) Dispersion {
		p := DefaultParams()
		p.BorrowMatch = borrow
		var d drift
		d.start(State{}, p)
		d.matchNew(borrowMatchGroups())
		return d.disp
	}
	on, off := run(true), run(false)
	t.Logf("on: factor %.4f, borrowed factor %.4f; off: factor %.4f, borrowed factor %v", on.NewFactor, on.BorrowFactor, off.NewFactor, off.BorrowFactor)
	if off.BorrowFactor != 0 || len(off.BorrowPending) != 0 {
		t.Errorf("off: borrowed factor %v, %d pending", off.BorrowFactor, len(off.BorrowPending))
	}
	if !(on.BorrowFactor > 0 && on.BorrowFactor < on.NewFactor) {
		t.Errorf("borrowed factor %v, never-tried factor %v: want the borrowed picks' count cut more", on.BorrowFactor, on.NewFactor)
	}
	if !(on.NewFactor > off.NewFactor) {
		t.Errorf("never-tried factor %v with the borrowed groups apart, %v with them: want it larger apart", on.NewFactor, off.NewFactor)
	}
}

// TestBorrowedUntriedPickAnswered: Pick answers an untried pick that borrowed evidence with
// the borrowed factor, one with its prior alone with the never-tried factor, a random slot
// with neither; while the borrowed factor is unmeasured, a borrowed pick takes the
// never-tried factor.
func TestBorrowedUntriedPickAnswered(t *testing.T) {
	nodes := []graph.Node{{Env: 0, Task: "a"}, {Env: 0, Task: "b"}, {Env: 0, Task: "lone"}}
	adj := [][]graph.Edge{{{To: 1, Weight: 1, Sim: 1}}, {{To: 0, Weight: 1, Sim: 1}}, nil}
	g := graph.New([]string{"e"}, nodes, adj)
	tasks := make([]stats.Task, 3)
	var grp stats.Group
	for j := range 16 {
		tasks[0].Add(float64(j%2), 1, 1, true, &grp, stats.DefaultDecay)
	}
	pr, err := NewPredictor(DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	preds, st, err := pr.Predict(g, tasks, 2, State{})
	if err != nil {
		t.Fatal(err)
	}
	preds = clonePreds(preds)
	b, lone := preds[1], preds[2]
	if !(b.Borrowed >= 1) || lone.Borrowed != 0 {
		t.Fatalf("b borrowed %v, lone %v: the graph does not make the two kinds", b.Borrowed, lone.Borrowed)
	}
	st.Dispersion.NewFactor = 1
	with := st
	with.Dispersion.BorrowFactor = 0.25
	if got, want := pr.Pick(with, b, false, false), pr.Pick(st, b, false, false); !(got.PDeg > want.PDeg) || got.Mean != want.Mean {
		t.Errorf("borrowed pick: chance %v with the borrowed factor ¼, %v without: want higher, the same mean", got.PDeg, want.PDeg)
	}
	if got, want := pr.Pick(with, lone, false, false), pr.Pick(st, lone, false, false); got != want {
		t.Errorf("prior-alone pick: %+v with the borrowed factor, %+v without", got, want)
	}
	if got, want := pr.Pick(with, b, false, true), pr.Pick(st, b, false, true); got != want {
		t.Errorf("random slot: %+v with the borrowed factor, %+v without", got, want)
	}
	unset := st
	unset.Dispersion.NewFactor = 0.25
	if got, want := pr.Pick(unset, b, false, false), pr.Pick(unset, lone, false, false); !(got.PDeg > pr.Pick(st, b, false, false).PDeg) || want.PDeg <= pr.Pick(st, lone, false, false).PDeg {
		t.Errorf("borrowed factor unmeasured: the never-tried factor ¼ should apply to both kinds (%v, %v)", got.PDeg, want.PDeg)
	}
}

// TestDispersionVersion6OnlyWithABorrowedFactor: a Dispersion without a borrowed factor or
// groups waiting for one is written in the version it was before (2 to 5, the very bytes); with
// them, as version 6: that form's fields (graded maps' flags, 0 when none), then the factor
// and its groups, which decode back to what its JSON decodes to.
func TestDispersionVersion6OnlyWithABorrowedFactor(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	for i := range 300 {
		d := randomDispersion(rng)
		if rng.IntN(2) == 0 {
			d.NewFactor, d.NewPending = 0.5+rng.Float64(), []MatchGroup{{Mean: 0.4, Count: 3, N: 8, K: 8}}
		}
		if rng.IntN(3) == 0 {
			d.Graded = &GradedCal{Rechosen: &Trend{N: 3}}
		}
		bare, err := d.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if bare[0] == dispersionVersion6 {
			t.Fatalf("draw %d: version 6 without a borrowed factor", i)
		}
		d.BorrowFactor = 0.25 + rng.Float64()
		if rng.IntN(2) == 0 {
			d.BorrowPending = []MatchGroup{{Mean: 0.5, Count: 6, N: 8, K: 0}, {Mean: 0.3, Count: 7.5, N: 8, K: 8}}
		}
		with, err := d.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if with[0] != dispersionVersion6 {
			t.Fatalf("draw %d: version %d with a borrowed factor, want 6", i, with[0])
		}
		var got Dispersion
		if err := got.UnmarshalBinary(with); err != nil {
			t.Fatalf("draw %d: %v", i, err)
		}
		js, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var want Dispersion
		if err := json.Unmarshal(js, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("draw %d: version 6 decodes to\n%+v\nits JSON to\n%+v", i, got, want)
		}
		if err := new(Dispersion).UnmarshalBinary(with[:len(with)-1]); err == nil {
			t.Fatalf("draw %d: version 6 cut short decoded", i)
		}
	}
}
