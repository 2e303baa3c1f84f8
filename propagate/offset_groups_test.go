package propagate

import (
	"fmt"
	"testing"
)

// TestNeverTriedOffsetNotFromOneGroup (review15): the never-tried offset is measured
// only once minFactorGroups groups have come back (matchNew keeps fewer pending), so that a
// group or two of 8 rollouts cannot move it. Since 3539870 the groups answered with the start
// count towards that minimum but are then left out of the offset's measure
// (answeredWithout): 7 of the first request's groups pending and a single later group of 8
// rollouts, all solved, move the offset to 0.4 (factorRate of the bound 2 that one group
// measures) — the very move review14 called wrong when it came from groups answered at ½.
// Passes when the offset waits for minFactorGroups groups not answered with the start (e.g.
// keeps the later groups pending while fewer than minFactorGroups of them are back).
func TestNeverTriedOffsetNotFromOneGroup(t *testing.T) {
	var first []group // the first request's untried picks, answered at ½, solved 7-8 of 8
	for i := range 7 {
		first = append(first, group{b: Baseline{Env: "e", Task: fmt.Sprint(i), Pred: 0.5, Count: 2, Start: true}, k: int64(7 + i%2), n: 8})
	}
	var d drift
	d.start(State{}, DefaultParams())
	d.measureDispersion(first)
	if d.disp.NewOffset != 0 || len(d.disp.NewPending) != 7 || !d.disp.Global.measured() {
		t.Fatalf("after the first request's 7 groups: offset %v, %d pending, global measured %v; want 0, 7, true",
			d.disp.NewOffset, len(d.disp.NewPending), d.disp.Global.measured())
	}
	one := group{b: Baseline{Env: "e", Task: "later", Pred: 0.5, Count: 2}, k: 8, n: 8} // answered after
	d.measureDispersion([]group{one})
	if d.disp.NewOffset != 0 {
		t.Errorf("one group of 8 rollouts answered after the start moved the never-tried offset to %v; "+
			"want 0 until %d such groups are back", d.disp.NewOffset, minFactorGroups)
	}
}
