package batcher

import (
	"math"
	"testing"
)

// TestMatchedInvertsTheAllEqualChance: a 0/1 task of success chance p has groups of g all-equal
// with chance p^g + (1−p)^g; the matched value of that chance is 4p(1−p), to within the
// table's interpolation, for p on either side of ½ and every group size a trainer uses.
func TestMatchedInvertsTheAllEqualChance(t *testing.T) {
	for _, g := range []int{2, 4, 8, 16, 64} {
		tab := newMatchedTable(g)
		for _, p := range []float64{0.001, 0.01, 0.05, 0.1, 0.2, 0.3, 0.45, 0.5, 0.7, 0.95} {
			d := math.Pow(p, float64(g)) + math.Pow(1-p, float64(g))
			want := 4 * p * (1 - p)
			if got := tab.value(d); math.Abs(got-want) > 2e-3 {
				t.Errorf("g %d, p %v: matched value %.5f, want 4p(1-p) = %.5f", g, p, got, want)
			}
		}
		if v := tab.value(1); v != 0 {
			t.Errorf("g %d: a task always all-equal is worth %v, want 0", g, v)
		}
		if v := tab.value(0); v != 1 {
			t.Errorf("g %d: a task never all-equal is worth %v, want 1", g, v)
		}
	}
	if v := newMatchedTable(1).value(0.3); v != 0 {
		t.Errorf("groups of one: worth %v, want 0", v)
	}
}
