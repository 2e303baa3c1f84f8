package propagate

import (
	"fmt"
	"math"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

// star returns a graph of one environment: node 0 tied to nodes 1..k with weight w.
func star(k int, w float32) *graph.Graph {
	nodes := make([]graph.Node, k+1)
	adj := make([][]graph.Edge, k+1)
	for i := range nodes {
		nodes[i] = graph.Node{Env: 0, Task: string(rune('a' + i))}
	}
	for j := 1; j <= k; j++ {
		adj[0] = append(adj[0], graph.Edge{To: int32(j), Weight: w, Sim: w})
		adj[j] = append(adj[j], graph.Edge{To: 0, Weight: w, Sim: w})
	}
	return graph.New([]string{"env"}, nodes, adj)
}

// rollGroup adds a group of rewards to t at round.
func rollGroup(t *stats.Task, round int64, rewards ...float64) {
	var g stats.Group
	for _, r := range rewards {
		t.Add(r, round, round, true, &g, stats.DefaultDecay)
	}
}

func mustPredict(t *testing.T, g *graph.Graph, tasks []stats.Task, round int64, p Params) []Prediction {
	t.Helper()
	preds, err := Predict(g, tasks, round, p)
	if err != nil {
		t.Fatal(err)
	}
	for i, pr := range preds {
		for _, x := range []float64{pr.Alpha, pr.Beta, pr.Mean, pr.Var, pr.PDeg, pr.SD, pr.Own, pr.Borrowed} {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("node %d: prediction has a non-finite number: %+v", i, pr)
			}
		}
	}
	return preds
}

func TestUnseenTaskWithSolvedNeighboursIsEasy(t *testing.T) {
	g := star(5, 0.8)
	tasks := make([]stats.Task, 6)
	for j := 1; j <= 5; j++ {
		rollGroup(&tasks[j], 1, 1, 1, 1, 1, 1, 1, 1, 1)
	}
	p := mustPredict(t, g, tasks, 1, DefaultParams())[0]
	if p.Own != 0 || p.Borrowed <= 0 {
		t.Fatalf("node 0 should rest on borrowed evidence only: %+v", p)
	}
	if p.Mean < 0.9 || p.PDeg < 0.6 {
		t.Errorf("unseen task whose neighbours are all solved: mean %.3f, degenerate chance %.3f; want easy (mean > 0.9)", p.Mean, p.PDeg)
	}
	// Without the graph it still leans on the environment prior, which is solved too, but
	// less surely.
	np := DefaultParams()
	np.Gamma = 0
	q := mustPredict(t, g, tasks, 1, np)[0]
	if q.Mean >= p.Mean || q.Count() >= p.Count() {
		t.Errorf("the graph should add evidence: with %.3f (n=%.1f), without %.3f (n=%.1f)", p.Mean, p.Count(), q.Mean, q.Count())
	}
}

// TestUnseenTaskInUnknownEnvIsAFairCoin: with nothing known, a task's prior is Beta(κ/2, κ/2)
// with the count scaled by the dispersion correction's start (Params.DispersionStart), the
// first request's honest spread; with the correction off, the prior alone.
func TestUnseenTaskInUnknownEnvIsAFairCoin(t *testing.T) {
	g := star(2, 0.5)
	off := DefaultParams()
	off.DispersionMemory = 0
	for _, c := range []struct {
		name  string
		p     Params
		count float64
	}{
		{"correction off", off, off.Kappa},
		{"default", DefaultParams(), DefaultParams().Kappa * DefaultParams().DispersionStart},
	} {
		p := mustPredict(t, g, make([]stats.Task, 3), 1, c.p)[0]
		if math.Abs(p.Mean-0.5) > 1e-9 || math.Abs(p.Count()-c.count) > 1e-12 {
			t.Errorf("%s: nothing known: want a prior of mean 0.5 and count %v, got %+v", c.name, c.count, p)
		}
		if want := BetaBinomialDegenerate(c.count/2, c.count/2, 8); math.Abs(p.PDeg-want) > 1e-12 {
			t.Errorf("%s: PDeg %g, want %g", c.name, p.PDeg, want)
		}
	}
}

func TestNoEchoOfOwnEvidence(t *testing.T) {
	// Two nodes tied to each other: with two hops, node 0's own evidence must not come back to
	// it through node 1.
	g := star(1, 1)
	tasks := make([]stats.Task, 2)
	rollGroup(&tasks[0], 1, 1, 1, 1, 1)
	for _, hops := range []int{1, 2} {
		p := DefaultParams()
		p.Hops, p.Kappa = hops, 1e-9
		pr := mustPredict(t, g, tasks, 1, p)[0]
		if pr.Borrowed > 1e-9 {
			t.Errorf("hops=%d: node 0 borrowed %g of its own evidence back", hops, pr.Borrowed)
		}
	}
}

func TestTwoHopsReachFarther(t *testing.T) {
	// A path 0 – 1 – 2: node 0 learns of node 2 only with two hops.
	nodes := []graph.Node{{Env: 0, Task: "a"}, {Env: 0, Task: "b"}, {Env: 0, Task: "c"}}
	adj := [][]graph.Edge{
		{{To: 1, Weight: 1, Sim: 1}},
		{{To: 0, Weight: 1, Sim: 1}, {To: 2, Weight: 1, Sim: 1}},
		{{To: 1, Weight: 1, Sim: 1}},
	}
	g := graph.New([]string{"env"}, nodes, adj)
	tasks := make([]stats.Task, 3)
	rollGroup(&tasks[2], 1, 0, 0, 0, 0, 0, 0, 0, 0)
	for hops, want := range map[int]bool{1: false, 2: true} {
		p := DefaultParams()
		p.Hops = hops
		got := mustPredict(t, g, tasks, 1, p)[0].Borrowed > 0
		if got != want {
			t.Errorf("hops=%d: node 0 borrowed from node 2: %v, want %v", hops, got, want)
		}
	}
}

func TestDecayWeakensOldEvidence(t *testing.T) {
	g := star(1, 1)
	tasks := make([]stats.Task, 2)
	rollGroup(&tasks[0], 1, 1, 1, 1, 1, 1, 1, 1, 1)
	p := DefaultParams()
	p.Gamma = 0
	fresh := mustPredict(t, g, tasks, 1, p)[0]
	old := mustPredict(t, g, tasks, 21, p)[0]
	want := 8 * math.Pow(p.Decay, 20)
	if math.Abs(old.Own-want) > 1e-9 || fresh.Own != 8 {
		t.Errorf("own evidence: fresh %g (want 8), 20 rounds later %g (want %g)", fresh.Own, old.Own, want)
	}
	if !(old.SD > fresh.SD && old.Mean < fresh.Mean && old.PDeg < fresh.PDeg) {
		t.Errorf("old evidence should leave more doubt: fresh %+v, old %+v", fresh, old)
	}
	p.Decay = 1
	nodecay := mustPredict(t, g, tasks, 21, p)[0]
	if nodecay.Own != 8 {
		t.Errorf("decay 1 keeps evidence: own %g", nodecay.Own)
	}
}

func TestContinuousRewardsWithoutSpread(t *testing.T) {
	// A task that always scores 0.5 has mean 0.5 but no within-group variance, and every group
	// is degenerate.
	g := star(1, 1)
	tasks := make([]stats.Task, 2)
	for r := int64(1); r <= 6; r++ {
		rollGroup(&tasks[0], r, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5)
	}
	p := mustPredict(t, g, tasks, 6, DefaultParams())[0]
	if !p.Continuous || math.Abs(p.Mean-0.5) > 0.01 {
		t.Fatalf("want a continuous task of mean 0.5: %+v", p)
	}
	if p.Var > 0.05 || p.PDeg < 0.6 {
		t.Errorf("no spread observed: variance %g (want near 0), degenerate chance %g (want high)", p.Var, p.PDeg)
	}
	// A binary task of the same mean has the full Bernoulli spread.
	tasks[0] = stats.Task{}
	for r := int64(1); r <= 6; r++ {
		rollGroup(&tasks[0], r, 0, 1, 0, 1, 0, 1, 0, 1)
	}
	b := mustPredict(t, g, tasks, 6, DefaultParams())[0]
	if b.Continuous || b.Var < 0.2 || b.PDeg > 0.05 {
		t.Errorf("binary task of mean 0.5: %+v", b)
	}
}

func TestPredictRejectsMisindexedTasks(t *testing.T) {
	if _, err := Predict(star(2, 1), make([]stats.Task, 2), 1, DefaultParams()); err == nil {
		t.Error("2 tasks for 3 nodes: want an error")
	}
	bad := DefaultParams()
	bad.Decay = 1.5
	if _, err := Predict(star(2, 1), make([]stats.Task, 3), 1, bad); err == nil {
		t.Error("decay 1.5: want an error")
	}
}

// TestCentreOfASmallEnvironmentLeansOnAllEnvironments: the centre the dispersion
// correction's slope pulls towards is an environment's mean shrunk towards all
// environments' by centrePrior rollouts. An environment whose one group failed 8 times of 8
// beside environments that succeed 40% of the time is centred between the two, and nearer
// its own mean as its evidence grows; before, it was centred at logit(1/18) on its one group.
func TestCentreOfASmallEnvironmentLeansOnAllEnvironments(t *testing.T) {
	centre := func(groups int) float64 {
		var nodes []graph.Node
		for i := range 200 {
			nodes = append(nodes, graph.Node{Env: 0, Task: fmt.Sprintf("b%03d", i)})
		}
		for i := range 8 {
			nodes = append(nodes, graph.Node{Env: 1, Task: fmt.Sprintf("s%d", i)})
		}
		g := graph.New([]string{"big", "small"}, nodes, nil)
		tasks := make([]stats.Task, len(nodes))
		for i := range 200 {
			for j := range 10 {
				var grp stats.Group
				tasks[i].Add(float64(boolInt(j < 4)), 1, 1, true, &grp, stats.DefaultDecay)
			}
		}
		for i := 200; i < 200+groups; i++ {
			var grp stats.Group
			for range 8 {
				tasks[i].Add(0, 1, 1, true, &grp, stats.DefaultDecay)
			}
		}
		pr, err := NewPredictor(DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		preds, _, err := pr.Predict(g, tasks, 1, State{})
		if err != nil {
			t.Fatal(err)
		}
		return preds[len(nodes)-1].centre // an untried task of the small environment
	}
	own := logit(0.5 / 9)
	all := logit((0.4*2000 + 0.5) / (2000 + 8 + 1))
	one, four := centre(1), centre(4)
	if !(one > own+0.5 && one < all) {
		t.Errorf("centre after one failed group %.3f: want between its own logit %.3f and all environments' %.3f, well away from its own", one, own, all)
	}
	if !(four < one) {
		t.Errorf("centre after four failed groups %.3f: want below that after one, %.3f", four, one)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestSetGroupSize: a valid group size becomes the Predictor's; an invalid one is refused and
// changes nothing.
func TestSetGroupSize(t *testing.T) {
	pr, err := NewPredictor(DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	if err := pr.SetGroupSize(4); err != nil || pr.Params().GroupSize != 4 {
		t.Fatalf("SetGroupSize(4): %v, group size %d", err, pr.Params().GroupSize)
	}
	for _, g := range []int{0, -1, 1<<16 + 1} {
		if err := pr.SetGroupSize(g); err == nil || pr.Params().GroupSize != 4 {
			t.Errorf("SetGroupSize(%d): %v, group size %d; want an error and 4 kept", g, err, pr.Params().GroupSize)
		}
	}
}
