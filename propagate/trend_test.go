package propagate

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

// TestTrendFitRecoversCoefficients fits groups drawn from a known trend, in batches as calls
// would see them, and requires the coefficients back.
func TestTrendFitRecoversCoefficients(t *testing.T) {
	want := [trendDim]float64{0.3, 0.6, 0.25, -0.2}
	rng := rand.New(rand.NewPCG(3, 4))
	var tr Trend
	for range 40 {
		var obs []trendObs
		for range 50 {
			own, base := rng.Float64()*0.9+0.05, rng.Float64()*0.8+0.1
			x := trendFeatures(own, base, int64(8<<rng.IntN(5)), 8, float64(rng.IntN(20)))
			p := sigmoid(logit(base) + dot(want, x))
			var k float64
			for range 8 {
				k += bernoulli(rng, p)
			}
			obs = append(obs, trendObs{x: x, base: logit(base), k: k, n: 8})
		}
		tr = tr.fit(obs, 0.9)
	}
	for j := range want {
		if math.Abs(tr.Beta[j]-want[j]) > 0.12 {
			t.Errorf("coefficient %d: %.3f, want %.3f ± 0.12 (all %v)", j, tr.Beta[j], want[j], tr.Beta)
		}
	}
	if tr.N < 400 || tr.N > 501 {
		t.Errorf("decayed groups %.1f, want about 50/(1-0.9) = 500", tr.N)
	}
}

// TestTrendFitStaysPutWithoutGroups: a call that measures nothing keeps the fit as it is, and
// a fit of groups that the predictions got right keeps the coefficients near 0.
func TestTrendFitStaysPutWithoutGroups(t *testing.T) {
	tr := Trend{Beta: [trendDim]float64{0.5, 0.2, 0.1, 0.05}, N: 3}
	if got := tr.fit(nil, 0.9); got != tr {
		t.Errorf("fit of no groups %+v, want %+v", got, tr)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	var flat Trend
	for range 20 {
		var obs []trendObs
		for range 50 {
			own, base := rng.Float64()*0.9+0.05, rng.Float64()*0.8+0.1
			var k float64
			for range 8 {
				k += bernoulli(rng, base)
			}
			obs = append(obs, trendObs{x: trendFeatures(own, base, 16, 8, float64(rng.IntN(20))), base: logit(base), k: k, n: 8})
		}
		flat = flat.fit(obs, 0.9)
	}
	for j, b := range flat.Beta {
		if math.Abs(b) > 0.1 {
			t.Errorf("coefficient %d of calibrated groups: %.3f, want about 0 (all %v)", j, b, flat.Beta)
		}
	}
}

// trainWorld is one environment of 48 tasks whose chance rises by gain logits each time a
// group of theirs is rolled out (training), with starting chances spread from mostly failed
// to mostly solved; every round, the tasks of the first half are rolled out and two of the
// second half in turn. It returns the mean absolute error of the predicted means of the tasks
// rolled out before, against their chances then, over rounds 21-40.
func trainWorld(t *testing.T, p Params, gain float64) float64 {
	t.Helper()
	const n = 48
	nodes := make([]graph.Node, n)
	for i := range nodes {
		nodes[i] = graph.Node{Task: fmt.Sprintf("t%02d", i)}
	}
	g := graph.New([]string{"env"}, nodes, nil)
	tasks := make([]stats.Task, n)
	start := make([]float64, n)
	trained := make([]float64, n)
	for i := range start {
		start[i] = -2.5 + 5*float64((i*7)%n)/float64(n-1)
	}
	chance := func(i int) float64 { return sigmoid(start[i] + gain*trained[i]) }
	rng := rand.New(rand.NewPCG(11, 12))
	c := newChain(t, p)
	var sum float64
	var count int
	for round := int64(1); round <= 40; round++ {
		preds := c.call(t, g, tasks, round)
		var picks []int
		for i := range n / 2 {
			picks = append(picks, i)
		}
		picks = append(picks, n/2+int(2*round)%(n/2), n/2+int(2*round+1)%(n/2))
		for _, i := range picks {
			if round > 20 && tasks[i].Rollouts > 0 {
				sum += math.Abs(preds[i].Mean - chance(i))
				count++
			}
			var grp stats.Group
			q := chance(i)
			for range 8 {
				tasks[i].Add(bernoulli(rng, q), round, round, true, &grp, p.Decay)
			}
			trained[i]++
		}
	}
	return sum / float64(count)
}

// TestRechosenTrendFollowsTraining: where a task's chance rises with every group trained on
// it, one re-chosen offset cannot be right both for tasks trained every round and for tasks
// trained once in a while; the trend, fitted to the groups that came back, predicts both
// closer. With no training it must not be worse than the one offset.
func TestRechosenTrendFollowsTraining(t *testing.T) {
	on, off := DefaultParams(), DefaultParams()
	off.RechosenTrend = 0
	errOn, errOff := trainWorld(t, on, 0.15), trainWorld(t, off, 0.15)
	t.Logf("tasks trained on, mean absolute error of the tried tasks' means: trend %.4f, one offset %.4f", errOn, errOff)
	if errOn > 0.9*errOff {
		t.Errorf("with training: error %.4f with the trend, %.4f with one offset; want at least 10%% less", errOn, errOff)
	}
	stillOn, stillOff := trainWorld(t, on, 0), trainWorld(t, off, 0)
	t.Logf("no training: trend %.4f, one offset %.4f", stillOn, stillOff)
	if stillOn > 1.05*stillOff {
		t.Errorf("without training: error %.4f with the trend, %.4f with one offset; want no worse", stillOn, stillOff)
	}
}

// TestTrendThroughJSONPredictsTheSame: the State a call returns, trend included, written as
// JSON and read back, predicts exactly as the State kept in memory (the daemon stores it so).
func TestTrendThroughJSONPredictsTheSame(t *testing.T) {
	p := DefaultParams()
	const n = 24
	nodes := make([]graph.Node, n)
	for i := range nodes {
		nodes[i] = graph.Node{Task: fmt.Sprintf("t%02d", i)}
	}
	g := graph.New([]string{"env"}, nodes, nil)
	tasks := make([]stats.Task, n)
	rng := rand.New(rand.NewPCG(1, 2))
	c := newChain(t, p)
	for round := int64(1); round <= 8; round++ {
		c.call(t, g, tasks, round)
		for i := range n / 2 {
			var grp stats.Group
			q := sigmoid(-2 + 4*float64(i)/n + 0.3*float64(tasks[i].Rollouts/8))
			for range 8 {
				tasks[i].Add(bernoulli(rng, q), round, round, true, &grp, p.Decay)
			}
		}
	}
	if c.st.Dispersion.Trend == nil || c.st.Dispersion.Trend.Beta == ([trendDim]float64{}) {
		t.Fatalf("trend %+v: want it measured, else this test proves nothing", c.st.Dispersion.Trend)
	}
	data, err := json.Marshal(c.st)
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	want := clonePreds(predictWith(t, p, g, tasks, 9, c.st))
	got := predictWith(t, p, g, tasks, 9, back)
	for i := range want {
		if got[i].Alpha != want[i].Alpha || got[i].Beta != want[i].Beta {
			t.Fatalf("node %d after the round trip: %v, %v; want %v, %v", i, got[i].Alpha, got[i].Beta, want[i].Alpha, want[i].Beta)
		}
	}
	noTrend := back
	noTrend.Dispersion.Trend = nil
	without := predictWith(t, p, g, tasks, 9, noTrend)
	if without[0].Mean == want[0].Mean {
		t.Errorf("a tried task is predicted %v with the stored trend and without it: the trend is not read from the State", want[0].Mean)
	}
}

func predictWith(t *testing.T, p Params, g *graph.Graph, tasks []stats.Task, round int64, st State) []Prediction {
	t.Helper()
	pr, err := NewPredictor(p)
	if err != nil {
		t.Fatal(err)
	}
	preds, _, err := pr.Predict(g, tasks, round, st)
	if err != nil {
		t.Fatal(err)
	}
	return preds
}

// TestTrendFitClimbsFromSaturation: groups that all came back full where the predictions
// said almost none (degenerate input) make the fit's objective rise (far, at the first call;
// never fall after). Six full Newton steps
// overshot into saturation, where only the ridge pulls, and the next step went straight back
// to the start: the fit returned its starting coefficients exactly, call after call.
func TestTrendFitClimbsFromSaturation(t *testing.T) {
	for _, c := range []struct{ own, mean, k, n float64 }{
		{0.99, 0.01, 16, 16}, {0.01, 0.99, 0, 16}, {0.999999, 1e-6, 1e6, 1e6},
	} {
		var obs []trendObs
		for i := range 500 {
			x := trendFeatures(c.own, c.mean, int64(8+i), 8, float64(i%5))
			obs = append(obs, trendObs{x: x, base: logit(c.mean), k: c.k, n: c.n})
		}
		var tr Trend
		for call := range 3 {
			next := tr.fit(obs, 0.9)
			prior := tr.Info
			for j := range prior {
				prior[j] *= 0.9
			}
			before, after := tr.objective(obs, tr.Beta, prior, trendRidge), tr.objective(obs, next.Beta, prior, trendRidge)
			if rise := after - before; !(rise >= 0) || call == 0 && !(rise > 1) || !next.valid() {
				t.Errorf("%+v call %d: objective %.6g -> %.6g (coefficients %v), want it to rise", c, call, before, after, next.Beta)
			}
			tr = next
		}
	}
}

// The trend's features from the tables are trendFeatures' own, bit for bit, inside and beyond
// the tables, for several group sizes (and tables made again when the size changes).
func TestTrendTablesAreTrendFeatures(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	var tt trendTables
	for _, g := range []int{8, 1, 5, 16, 8} {
		tt.tables(g)
		for range 20000 {
			own, base := rng.Float64(), rng.Float64()
			rollouts := int64(rng.IntN(3 * trendTableRollouts))
			if rng.IntN(10) == 0 {
				rollouts = int64(rng.IntN(3))
			}
			age := uint16(rng.IntN(200))
			if rng.IntN(10) == 0 {
				age = uint16(rng.IntN(65536))
			}
			want := trendFeatures(own, base, rollouts, g, float64(age))
			if got := tt.features(own, logit(base), rollouts, age); got != want {
				t.Fatalf("G %d, %d rollouts, age %d: %v, want %v", g, rollouts, age, got, want)
			}
		}
	}
}
