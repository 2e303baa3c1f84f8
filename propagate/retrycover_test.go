package propagate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

func TestCoverReturn(t *testing.T) {
	cases := []struct {
		name         string
		cover, explo *Signal
		want         float64
	}{
		{"nothing measured", nil, nil, 1},
		{"too few exploitation groups", &Signal{Sum: 0, N: 500}, &Signal{Sum: 30, N: 31}, 1},
		{"exploitation re-tries never informative", &Signal{Sum: 0, N: 500}, &Signal{Sum: 0, N: 100}, 1},
		{"no coverage re-try yet", nil, &Signal{Sum: 80, N: 100}, 1},
		// (0 + 32·0.8) / (96 + 32) / 0.8 = 0.25
		{"coverage re-tries never informative", &Signal{Sum: 0, N: 96}, &Signal{Sum: 80, N: 100}, 0.25},
		// (48·0.4 + 32·0.8) / (48 + 32) / 0.8 = 0.7
		{"coverage re-tries half as informative", &Signal{Sum: 19.2, N: 48}, &Signal{Sum: 80, N: 100}, 0.7},
		{"coverage re-tries as informative", &Signal{Sum: 40, N: 50}, &Signal{Sum: 80, N: 100}, 1},
		{"coverage re-tries more informative: capped", &Signal{Sum: 50, N: 50}, &Signal{Sum: 40, N: 100}, 1},
	}
	for _, c := range cases {
		st := State{Dispersion: Dispersion{CoverSignal: c.cover, ExploitSignal: c.explo}}
		if got := st.CoverReturn(); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRetryOf(t *testing.T) {
	cases := []struct {
		name string
		b    Baseline
		t    stats.Task
		want retry
		ok   bool
	}{
		{"coverage re-try, one group all-equal", Baseline{Tried: true, Cover: true, Groups: 2, Degenerate: 2},
			stats.Task{Groups: 3, Degenerate: 3}, retry{groups: 1, informative: 0, cover: true}, true},
		{"exploitation re-try, two groups, one informative", Baseline{Tried: true, Groups: 2, Degenerate: 1},
			stats.Task{Groups: 4, Degenerate: 2}, retry{groups: 2, informative: 1}, true},
		{"never tried", Baseline{Cover: true}, stats.Task{Groups: 1}, retry{}, false},
		{"random slot", Baseline{Tried: true, Random: true}, stats.Task{Groups: 3}, retry{}, false},
		{"no group came back", Baseline{Tried: true, Groups: 3}, stats.Task{Groups: 3}, retry{}, false},
		{"counts ahead of the statistics", Baseline{Tried: true, Groups: 5, Degenerate: 1}, stats.Task{Groups: 3}, retry{}, false},
		{"degenerate fell below the baseline's", Baseline{Tried: true, Groups: 2, Degenerate: 2},
			stats.Task{Groups: 3, Degenerate: 1}, retry{}, false},
	}
	for _, c := range cases {
		got, ok := retryOf(c.b, &c.t)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %+v %v, want %+v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// retryWorld is two environments of 100 tasks each: in "stuck" every task is always solved,
// never solved or (partial credit) always half solved; in "even" every task is a fair coin.
type retryWorld struct {
	g     *graph.Graph
	tasks []stats.Task
	rng   *rand.Rand
}

func newRetryWorld() *retryWorld {
	var nodes []graph.Node
	for e := range 2 {
		for i := range 100 {
			nodes = append(nodes, graph.Node{Env: int32(e), Task: fmt.Sprintf("t%03d", i)})
		}
	}
	return &retryWorld{g: graph.New([]string{"even", "stuck"}, nodes, nil), tasks: make([]stats.Task, len(nodes)),
		rng: rand.New(rand.NewPCG(4, 17))}
}

// group rolls out one group of 8 for node i in round.
func (w *retryWorld) group(i int, round int64) {
	var grp stats.Group
	for range 8 {
		r := bernoulli(w.rng, 0.5)
		if i >= 100 { // stuck
			r = []float64{0, 1, 0.5}[i%3]
		}
		w.tasks[i].Add(r, round, round, true, &grp, stats.DefaultDecay)
	}
}

// retryRun rolls every task out once, then for rounds chooses every task again, marking the
// stuck ones chosen for coverage when cover says so, and returns the State after.
func retryRun(t *testing.T, rounds int64, cover func(node int) bool) State {
	t.Helper()
	w := newRetryWorld()
	p, err := NewPredictor(DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	for i := range w.tasks {
		w.group(i, 1)
	}
	var st State
	for round := int64(2); round <= rounds+2; round++ {
		preds, next, err := p.Predict(w.g, w.tasks, round, st)
		if err != nil {
			t.Fatal(err)
		}
		next.Baseline = Baselines(w.g, w.tasks, preds, nil)
		for i := range next.Baseline {
			next.Baseline[i].Cover = cover(i)
		}
		st = next
		if round <= rounds+1 {
			for i := range w.tasks {
				w.group(i, round)
			}
		}
	}
	return st
}

// TestCoverReturnIsMeasured: when the re-tries chosen for coverage are of tasks that come back
// all-equal (all 0, all 1 or, with partial credit, all ½) and those chosen for exploitation of
// fair coins, the state measures both, group by group, and the cover return falls towards 0;
// with no re-try marked for coverage nothing is measured for coverage and it stays 1.
func TestCoverReturnIsMeasured(t *testing.T) {
	st := retryRun(t, 3, func(i int) bool { return i >= 100 })
	cv, ex := st.Dispersion.CoverSignal, st.Dispersion.ExploitSignal
	if cv == nil || ex == nil {
		t.Fatalf("signals %+v %+v", cv, ex)
	}
	m := DefaultParams().DispersionMemory
	wantN := 100 * (1 + m + m*m) // three rounds of 100 groups, the older ones forgotten in part
	if cv.Sum != 0 || math.Abs(cv.N-wantN) > 1e-9 || math.Abs(ex.N-wantN) > 1e-9 {
		t.Errorf("cover %+v, exploit %+v: want 0 informative of %.2f groups, and %.2f groups", cv, ex, wantN, wantN)
	}
	if share := ex.mean(); share < 0.9 { // a fair coin's group of 8 is all-equal 1 time in 128
		t.Errorf("exploitation re-tries of fair coins informative %.3f of the time", share)
	}
	want := coverPrior / (wantN + coverPrior)
	if got := st.CoverReturn(); math.Abs(got-want) > 1e-9 || got > 0.15 {
		t.Errorf("cover return %v, want %v", got, want)
	}
	none := retryRun(t, 3, func(int) bool { return false })
	if none.Dispersion.CoverSignal != nil || none.CoverReturn() != 1 {
		t.Errorf("no coverage re-try: cover signal %+v, return %v", none.Dispersion.CoverSignal, none.CoverReturn())
	}
	if n := none.Dispersion.ExploitSignal; n == nil || math.Abs(n.N-2*wantN) > 1e-9 {
		t.Errorf("no coverage re-try: exploitation signal %+v, want %.2f groups", n, 2*wantN)
	}
	off := DefaultParams()
	off.DispersionMemory = 0
	if p, err := NewPredictor(off); err == nil {
		w := newRetryWorld()
		for i := range w.tasks {
			w.group(i, 1)
		}
		base := Baselines(w.g, w.tasks, make([]Prediction, len(w.tasks)), nil)
		for i := range w.tasks {
			w.group(i, 2)
		}
		_, next, err := p.Predict(w.g, w.tasks, 3, State{Baseline: base})
		if err != nil || next.Dispersion.ExploitSignal != nil {
			t.Errorf("dispersion memory 0: exploitation signal %+v, %v; want none", next.Dispersion.ExploitSignal, err)
		}
	}
}
