package propagate

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// Lean leaves SD and PDeg at 0 and every other number of every prediction, and the State,
// as they are without it, over a chain of calls with features, drift and the trend on.
func TestLeanChangesOnlySDAndPDeg(t *testing.T) {
	g, tasks := benchCatalogue(3000)
	p := DefaultParams()
	q := p
	q.Lean = true
	full, lean := newChain(t, p), newChain(t, q)
	rng := rand.New(rand.NewPCG(2, 3))
	for round := int64(21); round <= 24; round++ {
		want := clonePreds(full.call(t, g, tasks, round))
		got := clonePreds(lean.call(t, g, tasks, round))
		sd := 0
		for i := range want {
			if got[i].SD != 0 || got[i].PDeg != 0 {
				t.Fatalf("round %d node %d: lean SD %g PDeg %g", round, i, got[i].SD, got[i].PDeg)
			}
			if want[i].SD != 0 {
				sd++
			}
			want[i].SD, want[i].PDeg = 0, 0
		}
		if sd == 0 {
			t.Fatalf("round %d: no prediction had an SD without Lean", round)
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(lean.st, full.st) {
			t.Fatalf("round %d: lean predictions or state differ beyond SD and PDeg", round)
		}
		stepOn(tasks, round, rng)
	}
}
