package propagate

import (
	"fmt"
	"testing"
)

// TestNeverTriedOffsetNotFromTheFirstRequestInTwoParts (review14): README and Params.NewShift
// say the first request's groups, answered at ½ before anything was known, do not move the
// never-tried offset. matchNew gates on d.disp.Global.measured() at the time the groups are
// matched, not on how they were answered: when the first request's groups come back in two
// parts (a trainer that asks for the next batch before the last groups of the first are
// written, or rollouts committed across two state updates), the first part measures Global and
// the second part, still the first request's picks answered at ½, moves the offset (here to
// its bound's side) as if they said something of the predictions' level.
func TestNeverTriedOffsetNotFromTheFirstRequestInTwoParts(t *testing.T) {
	var first []group // the first request's untried picks, all answered at ½, solved 7-8 of 8
	for i := range 24 {
		first = append(first, group{b: Baseline{Env: "e", Task: fmt.Sprint(i), Pred: 0.5, Count: 2}, k: int64(7 + i%2), n: 8})
	}
	var d drift
	d.start(State{}, DefaultParams())
	d.measureDispersion(first[:12])
	if d.disp.NewOffset != 0 {
		t.Fatalf("the first part of the first request's groups moved the offset to %v", d.disp.NewOffset)
	}
	d.measureDispersion(first[12:])
	if d.disp.NewOffset != 0 {
		t.Errorf("the second part of the first request's groups (answered at ½ as the first part) moved the "+
			"offset to %v; want 0 (README: the first request's groups do not move it)", d.disp.NewOffset)
	}
}
