package ledger

import (
	"math"
	"testing"
)

func TestBinOf(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		want int
	}{{0, 0}, {0.0999, 0}, {0.1, 1}, {0.55, 5}, {0.9, 9}, {0.99, 9}, {1, 9}, {1.5, 9}, {-1, 0}, {math.NaN(), 0}} {
		if got := BinOf(tc.p); got != tc.want {
			t.Errorf("BinOf(%v) = %d; want %d", tc.p, got, tc.want)
		}
	}
}

func TestChannelOf(t *testing.T) {
	for _, tc := range []struct {
		random bool
		tried  int64
		want   Channel
	}{{false, 0, Untried}, {false, 3, Rechosen}, {true, 0, Random}, {true, 5, Random}} {
		if got := ChannelOf(tc.random, tc.tried); got != tc.want {
			t.Errorf("ChannelOf(%v, %d) = %s; want %s", tc.random, tc.tried, got, tc.want)
		}
	}
}

func TestMatches(t *testing.T) {
	p := Pending{Request: "r7", Step: 7}
	begun := Pending{Request: "r7", Step: 7, N: 1, Group: "g1"}
	for _, tc := range []struct {
		p       Pending
		req     string
		step    int64
		hasStep bool
		group   string
		want    bool
	}{
		{p, "r7", 0, false, "", true}, {p, "r7", 3, true, "", true}, // the request decides, whatever the step
		{p, "r8", 7, true, "", false}, {p, "", 7, true, "", true}, {p, "", 6, true, "", false}, {p, "", 0, false, "", true},
		{p, "r7", 0, false, "any", true},                                          // a group not begun takes any key
		{begun, "r7", 0, false, "g1", true}, {begun, "r7", 0, false, "g2", false}, // a begun one only its own
		{begun, "r8", 0, false, "g1", false},
	} {
		if got := tc.p.Matches(tc.req, tc.step, tc.hasStep, tc.group); got != tc.want {
			t.Errorf("%+v.Matches(%q, %d, %v, %q) = %v; want %v", tc.p, tc.req, tc.step, tc.hasStep, tc.group, got, tc.want)
		}
	}
}

// TestOpenAndOutcome follows one prediction from its answer to its outcome.
func TestOpenAndOutcome(t *testing.T) {
	if _, ok := Open(Prediction{}, 1, "r", 1, 1, 0); ok {
		t.Error("a group size of one opened a prediction: no such group can be degenerate")
	}
	p, ok := Open(Prediction{Rank: 2, PDegenerate: math.NaN(), Mean: 1.5}, 3, "r", 4, 3, 2)
	if !ok || p.Channel != Rechosen || p.PDegenerate != 0 || p.Mean != 1 || p.Answer != 3 || p.Rank != 2 {
		t.Fatalf("opened %+v; want a re-chosen prediction with finite numbers clamped into [0, 1]", p)
	}
	p.Add(1, "old")
	p.Restart() // the group begins again: the first rollout is forgotten
	for i, r := range []float64{0.5, 0.5, 0.5} {
		if done := p.Add(r, "g"); done != (i == 2) {
			t.Fatalf("after %d rollouts complete=%v", i+1, done)
		}
	}
	o := p.Outcome()
	if !o.Degenerate || o.Realised != 0.5 || o.Rollouts != 3 || p.Group != "g" {
		t.Errorf("outcome %+v; want a degenerate group of 3 with mean 0.5", o)
	}
	var c Cell
	c.Add(o)
	c.Add(Outcome{PDegenerate: 0.5, Mean: 0.5, Realised: 0.25, Rollouts: 3})
	pd, rd, pm, rm := c.Shares()
	if pd != 0.25 || rd != 0.5 || pm != 0.75 || rm != 0.375 || c.Gap() != 0.25 {
		t.Errorf("shares %v %v %v %v gap %v; want 0.25 0.5 0.75 0.375 and 0.25", pd, rd, pm, rm, c.Gap())
	}
}
