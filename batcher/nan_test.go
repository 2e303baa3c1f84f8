package batcher

import (
	"math"
	"testing"
	"time"
)

// TestNaNGainEnds: a prediction that is not a number (a damaged input no check caught) never
// makes the lazy greedy loop. Its gain compared unequal to itself, so the candidate was put
// back at the same NaN gain and popped again, for ever, at full CPU (what a NaN stored reward
// range did before storage refused it). The batch is chosen, from the tasks whose gains are
// numbers first, and says no NaN.
func TestNaNGainEnds(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(w world, i int)
	}{
		{"mean", func(w world, i int) { w.preds[i].Mean = math.NaN() }},
		{"variance", func(w world, i int) { w.preds[i].Var = math.NaN() }},
		{"p_degenerate", func(w world, i int) { w.preds[i].PDeg = math.NaN() }},
		{"alpha and beta", func(w world, i int) { w.preds[i].Alpha, w.preds[i].Beta = math.NaN(), math.NaN() }},
		{"own evidence", func(w world, i int) { w.preds[i].Own = math.NaN() }},
		{"borrowed evidence", func(w world, i int) { w.preds[i].Borrowed = math.NaN() }},
		{"graded spread", func(w world, i int) { w.tasks[i].WV, w.tasks[i].WN = math.NaN(), 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := randomWorld(t, 400, 4, 3, 0.5)
			for i := 0; i < len(w.preds); i += 3 {
				tc.spoil(w, i)
			}
			req := Request{Size: 40, GroupSize: 8, Step: w.step, Seed: 1}
			done := make(chan Batch, 1)
			go func() { done <- w.sel(t, req, DefaultParams()) }()
			select {
			case b := <-done:
				for _, pk := range b.Picks {
					if math.IsNaN(pk.Score) {
						t.Errorf("pick %+v scored NaN", pk)
					}
				}
				if len(b.Picks) != req.Size {
					t.Errorf("%d picks, want %d", len(b.Picks), req.Size)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("Select did not return in 20 s: the lazy greedy loops on a NaN gain")
			}
		})
	}
}

// TestGreedyEndsOnNaNScores: the lazy greedy itself ends when candidates' scores are NaN
// (whatever made them so), and takes every task whose score is a number first.
func TestGreedyEndsOnNaNScores(t *testing.T) {
	w := randomWorld(t, 400, 4, 5, 0.5)
	req := Request{Size: 40, GroupSize: 8, Step: w.step, Seed: 2}
	p := DefaultParams()
	p.RandomShare = 0
	allowed, err := allowedEnvs(w.g, req)
	if err != nil {
		t.Fatal(err)
	}
	s := newSelector(new(Selector), w.g, w.preds, w.tasks, req, p, allowed)
	spoilt := map[int]bool{}
	for k, i := range s.elig {
		if k%2 != 0 { // half left with a number, more than any quota: every pick must be one of them
			s.score[i], spoilt[int(i)] = math.NaN(), true
		}
	}
	done := make(chan struct{})
	go func() { s.round(req.Size, false); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the lazy greedy did not end in 20 s on NaN scores")
	}
	if len(s.picks) != req.Size {
		t.Fatalf("%d picks, want %d", len(s.picks), req.Size)
	}
	for _, pk := range s.picks {
		if spoilt[pk.Node] {
			t.Errorf("pick %d has a NaN score, taken before a task with a number", pk.Node)
		}
	}
}
