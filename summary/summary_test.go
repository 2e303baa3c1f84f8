package summary

import (
	"testing"

	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/stats"
	"github.com/envsched/envsched/storage"
)

func TestEnvs(t *testing.T) {
	envs := map[string]stats.Env{
		"web":  {Tasks: 4, TasksSeen: 2, Rollouts: 8, Sum: 6, Groups: 2, Degenerate: 1},
		"code": {Tasks: 3, TasksSeen: 1, Rollouts: 2, Sum: 0.5, Groups: 1, Degenerate: 1},
		"idle": {Tasks: 5},
	}
	rows, total := Envs(envs, storage.Range{Min: -1, Max: 1})
	want := []Env{
		{Name: "code", Env: envs["code"], MeanReward: -0.5}, // mean 0.25 of [0, 1] is -0.5 of [-1, 1]
		{Name: "idle", Env: envs["idle"], MeanReward: 0},    // no rollouts: 0, not Min
		{Name: "web", Env: envs["web"], MeanReward: 0.5},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows %+v", rows)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("row %d: %+v; want %+v", i, rows[i], want[i])
		}
	}
	wantTotal := Env{Name: "total", Env: stats.Env{Tasks: 12, TasksSeen: 3, Rollouts: 10, Sum: 6.5, Groups: 3, Degenerate: 2},
		MeanReward: 0.3} // 6.5/10 = 0.65 of [0, 1]
	if total.Env != wantTotal.Env || total.Name != "total" || total.MeanReward < 0.3-1e-15 || total.MeanReward > 0.3+1e-15 {
		t.Errorf("total %+v; want %+v", total, wantTotal)
	}
	if rows, total := Envs(nil, storage.Range{Min: 0, Max: 1}); len(rows) != 0 || total.Env != (stats.Env{}) || total.MeanReward != 0 {
		t.Errorf("no environments: %+v, %+v", rows, total)
	}
}

// Total adds the sums in name order, whatever order the map gives: the same bits every time.
// These three sums give other last bits in other orders.
func TestTotalAddsInNameOrder(t *testing.T) {
	a, b, c := 0.1, 0.2, 0.3 // variables: constant arithmetic would be exact
	envs := map[string]stats.Env{"a": {Sum: a}, "b": {Sum: b}, "c": {Sum: c}}
	if (a+b)+c == a+(b+c) {
		t.Fatal("the example does not depend on the order")
	}
	want := (a + b) + c
	for range 50 {
		if got := Total(envs).Sum; got != want {
			t.Fatalf("Total sum %v; want %v, the sum in name order", got, want)
		}
	}
}

// TestGradedText: the graded maps in the ledger's order of channels, those without a map left
// out; nothing at all while none.
func TestGradedText(t *testing.T) {
	if got := GradedText(nil); got != "" {
		t.Errorf("no maps: %q", got)
	}
	maps := map[string]*propagate.TrendShown{
		"random_slot": {Coef: [4]float64{-0.1, 0.2}, Groups: 3},
		"never_tried": {Coef: [4]float64{0.5, -0.25}, Groups: 12.25},
	}
	want := "never_tried +0.5000 -0.2500·logit (groups 12.2); random_slot -0.1000 +0.2000·logit (groups 3.0)"
	if got := GradedText(maps); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
