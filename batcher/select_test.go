package batcher

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/graph/graphtest"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/stats"
)

// world is a catalogue with a history: a graph, statistics per node and predictions.
type world struct {
	g     *graph.Graph
	tasks []stats.Task
	preds []propagate.Prediction
	step  int64
}

// randomWorld draws a catalogue of n tasks in envs environments; each task has a success
// probability from its environment's difficulty, and a random share of tasks has groups of 8
// rollouts from past steps. Some tasks were chosen before.
func randomWorld(t testing.TB, n, envs int, seed int64, history float64) world {
	t.Helper()
	g := graphtest.Random(n, envs, 10, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	diff := make([]float64, len(g.Envs))
	for e := range diff {
		diff[e] = rng.NormFloat64() * 1.5
	}
	const step = 20
	tasks := make([]stats.Task, n)
	for i := range tasks {
		p := 1 / (1 + math.Exp(-(diff[g.Nodes[i].Env] + rng.NormFloat64())))
		if rng.Float64() >= history {
			continue
		}
		for range 1 + rng.IntN(3) {
			round := int64(1 + rng.IntN(step-1))
			var grp stats.Group
			for range 8 {
				r := 0.0
				if rng.Float64() < p {
					r = 1
				}
				tasks[i].Add(r, round, round, true, &grp, stats.DefaultDecay)
			}
			tasks[i].Chosen++
			tasks[i].LastChosen = max(tasks[i].LastChosen, round)
		}
	}
	preds, err := propagate.Predict(g, tasks, step, propagate.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	return world{g: g, tasks: tasks, preds: slices.Clone(preds), step: step}
}

func (w world) sel(t testing.TB, req Request, p Params) Batch {
	t.Helper()
	b, err := Select(w.g, w.preds, w.tasks, req, p)
	if err != nil {
		t.Fatalf("select %+v: %v", req, err)
	}
	return b
}

// checkBatch asserts what a trainer would check of any batch: exactly size tasks, no repeats
// unless allowed and needed, only allowed environments, finite numbers that add up, quotas
// within their bounds.
func checkBatch(t *testing.T, w world, req Request, p Params, b Batch) {
	t.Helper()
	if len(b.Picks) != req.Size {
		t.Fatalf("batch has %d tasks, want %d", len(b.Picks), req.Size)
	}
	seen := map[int]int{}
	perEnv := make([]int, len(w.g.Envs))
	for _, pk := range b.Picks {
		seen[pk.Node]++
		env := w.g.Envs[w.g.Nodes[pk.Node].Env]
		perEnv[w.g.Nodes[pk.Node].Env]++
		if req.Envs != nil && !slices.Contains(req.Envs, env) || slices.Contains(req.ExcludeEnvs, env) {
			t.Fatalf("task of env %s chosen against envs=%v exclude=%v", env, req.Envs, req.ExcludeEnvs)
		}
		for _, x := range []float64{pk.Score, pk.Exploit, pk.Coverage, pk.Penalty} {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("non-finite number in %+v", pk)
			}
		}
		if math.Abs(pk.Score-(pk.Exploit+pk.Coverage-pk.Penalty)) > 1e-12 || pk.Reason == "" {
			t.Fatalf("score is not exploit + coverage - penalty, or no reason: %+v", pk)
		}
	}
	if !req.AllowRepeats || b.Eligible >= req.Size {
		for node, c := range seen {
			if c > 1 {
				t.Fatalf("task %d chosen %d times without need", node, c)
			}
		}
	}
	if req.Size <= b.Eligible {
		checkQuotas(t, w, req, p, b, perEnv)
	}
}

// checkQuotas checks the quota rule of one round: every active environment gets at least
// its minimum (half the uniform share, or all its tasks), and none more than MaxShare of the
// batch unless every other environment gave all its eligible tasks.
func checkQuotas(t *testing.T, w world, req Request, p Params, b Batch, perEnv []int) {
	t.Helper()
	active := 0
	for _, q := range b.Quotas {
		if q.Eligible > 0 {
			active++
		}
	}
	for e, q := range b.Quotas {
		if perEnv[e] != q.Slots {
			t.Fatalf("env %s: %d tasks, quota says %d", w.g.Envs[e], perEnv[e], q.Slots)
		}
		if q.Eligible == 0 {
			continue
		}
		lo := min(q.Eligible, int(math.Floor(p.MinShare*float64(req.Size)/float64(active))))
		if perEnv[e] < lo {
			t.Fatalf("env %s starves: %d tasks, minimum %d", w.g.Envs[e], perEnv[e], lo)
		}
		hi := int(math.Ceil(p.MaxShare * float64(req.Size)))
		if perEnv[e] > hi && active > 1 {
			for f, o := range b.Quotas {
				if f != e && o.Eligible > 0 && perEnv[f] < o.Eligible {
					t.Fatalf("env %s takes %d of %d slots (max %d) while env %s has tasks left", w.g.Envs[e], perEnv[e], req.Size, hi, w.g.Envs[f])
				}
			}
		}
	}
}

func TestSelectProperties(t *testing.T) {
	p := DefaultParams()
	for trial := range 40 {
		rng := rand.New(rand.NewPCG(uint64(trial), 1))
		n, envs := 20+rng.IntN(600), 1+rng.IntN(8)
		w := randomWorld(t, n, envs, int64(trial), rng.Float64())
		req := Request{Size: 1 + rng.IntN(n), GroupSize: 8, Step: w.step, Seed: rng.Uint64()}
		switch trial % 4 {
		case 1:
			req.Envs = pickEnvs(rng, w.g.Envs)
		case 2:
			if len(w.g.Envs) > 1 { // excluding the only environment leaves nothing to check
				req.ExcludeEnvs = pickEnvs(rng, w.g.Envs)[:1]
			}
		case 3:
			req.AllowRepeats = true
			req.Size = n + rng.IntN(2*n)
		}
		if trial%5 == 0 {
			p.Exploit = ExploitInformative
		} else {
			p.Exploit = ExploitVariance
		}
		t.Run(fmt.Sprintf("trial%d", trial), func(t *testing.T) {
			b, err := Select(w.g, w.preds, w.tasks, req, p)
			var few *TooFewTasksError
			if errors.As(err, &few) {
				// Right to refuse; then the largest batch that can be served is checked, so that
				// no trial ends without checking one (8 of 40 did).
				if req.AllowRepeats || few.Eligible >= req.Size {
					t.Fatalf("unexpected %v", err)
				}
				if few.Eligible == 0 {
					t.Fatalf("no eligible task in trial %d: the trial checks nothing; change its world", trial)
				}
				req.Size = few.Eligible
				b, err = Select(w.g, w.preds, w.tasks, req, p)
			}
			if err != nil {
				t.Fatal(err)
			}
			checkBatch(t, w, req, p, b)
			again := w.sel(t, req, p)
			if !slices.Equal(again.Picks, b.Picks) {
				t.Fatal("same input, different batch")
			}
		})
	}
}

func pickEnvs(rng *rand.Rand, envs []string) []string {
	out := slices.Clone(envs)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out[:1+rng.IntN(len(out))]
}

func TestDifferentSeedsCanDiffer(t *testing.T) {
	w := randomWorld(t, 2000, 5, 3, 0.5)
	req := Request{Size: 64, GroupSize: 8, Step: w.step, Seed: 1}
	a := w.sel(t, req, DefaultParams())
	req.Seed = 2
	b := w.sel(t, req, DefaultParams())
	if slices.Equal(a.Picks, b.Picks) {
		t.Error("seeds 1 and 2 gave the same batch; the random slots at least should differ")
	}
}

func TestColdStartSpansEnvsWithoutNearDuplicates(t *testing.T) {
	// A catalogue with no rollouts: 4 environments of very different sizes; in each, tasks
	// come in near-duplicate pairs (similarity 0.95).
	sizes := []int{400, 60, 40, 24}
	var envs []string
	var nodes []graph.Node
	for e, n := range sizes {
		envs = append(envs, fmt.Sprintf("env%d", e))
		for k := range n {
			nodes = append(nodes, graph.Node{Env: int32(e), Task: fmt.Sprintf("t%04d", k)})
		}
	}
	adj := make([][]graph.Edge, len(nodes))
	for i := 0; i+1 < len(nodes); i += 2 {
		adj[i] = append(adj[i], graph.Edge{To: int32(i + 1), Weight: 0.95, Sim: 0.95})
		adj[i+1] = append(adj[i+1], graph.Edge{To: int32(i), Weight: 0.95, Sim: 0.95})
	}
	g := graph.New(envs, nodes, adj)
	tasks := make([]stats.Task, len(nodes))
	preds, err := propagate.Predict(g, tasks, 1, propagate.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	w := world{g: g, tasks: tasks, preds: preds, step: 1}
	req := Request{Size: 40, GroupSize: 8, Step: 1, Seed: 9}
	p := DefaultParams()
	p.QuotaSize = 0 // equal quotas whatever the size (TestQuotaSizeShares has the others)
	b := w.sel(t, req, p)
	checkBatch(t, w, req, p, b)
	chosen := map[int]bool{}
	for _, pk := range b.Picks {
		chosen[pk.Node] = true
	}
	for _, pk := range b.Picks {
		if !pk.Random && chosen[pk.Node^1] {
			t.Errorf("near-duplicates %s and %s both chosen", nodes[pk.Node].Task, nodes[pk.Node^1].Task)
		}
	}
	for e, q := range b.Quotas {
		// Nothing is known, so every task has the same score and an environment's value is
		// the tasks it can give, up to the batch size: 40, 40, 40 and 24. Smoothed towards
		// uniform, env3's share is 0.7·24/144 + 0.3/4 ≈ 0.19 (7.7 slots), the others' ≈ 0.27
		// (10.8): the 400-task environment does not swamp the batch.
		want := 10.8
		if e == 3 {
			want = 7.7
		}
		if math.Abs(float64(q.Slots)-want) > 1 {
			t.Errorf("cold start: env %s got %d of 40 slots, want %.1f ± 1", envs[e], q.Slots, want)
		}
	}
	for _, pk := range b.Picks {
		if !pk.Random && pk.Reason != "new environment; env prior" {
			t.Errorf("cold start pick reason %q", pk.Reason)
		}
	}
}

func TestErrors(t *testing.T) {
	w := randomWorld(t, 50, 2, 1, 0.5)
	cases := []struct {
		name string
		req  Request
		want any
	}{
		{"unknown env", Request{Size: 4, GroupSize: 8, Envs: []string{"nope"}}, new(*UnknownEnvError)},
		{"too large", Request{Size: 51, GroupSize: 8}, new(*TooFewTasksError)},
		{"all excluded", Request{Size: 1, GroupSize: 8, ExcludeEnvs: w.g.Envs}, new(*TooFewTasksError)},
		{"zero size", Request{Size: 0, GroupSize: 8}, new(*RequestError)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Select(w.g, w.preds, w.tasks, c.req, DefaultParams())
			if err == nil || !errors.As(err, c.want) {
				t.Fatalf("got %v, want %T", err, c.want)
			}
			t.Log(err)
		})
	}
	// Every task retired (the catalogue emptied): the message says so, not that envs and
	// exclude_envs left nothing (the request named neither).
	all := make([]bool, w.g.Len())
	for i := range all {
		all[i] = true
	}
	_, err := Select(w.g, w.preds, w.tasks, Request{Size: 1, GroupSize: 8, Retired: all}, DefaultParams())
	var few *TooFewTasksError
	if !errors.As(err, &few) || few.Retired != 50 || !strings.Contains(err.Error(), "retired") {
		t.Errorf("every task retired: %v; want a TooFewTasksError naming the 50 retired tasks", err)
	}
	// Some retired (newuser14: a catalogue file deleted while another lists the rest): the
	// message of a batch too large counted only the eligible tasks, and the user who did not
	// know the file's tasks went was not told where they were.
	all[0], all[1] = false, false
	_, err = Select(w.g, w.preds, w.tasks, Request{Size: 3, GroupSize: 8, Retired: all}, DefaultParams())
	if err == nil || !strings.Contains(err.Error(), "larger than the 2 eligible tasks (48 more are retired: no file in DIR/catalog lists them") {
		t.Errorf("48 of 50 tasks retired, a batch of 3: %v; want the retired counted in the message", err)
	}
	long := strings.Repeat("x", 100000)
	_, err = Select(w.g, w.preds, w.tasks, Request{Size: 1, GroupSize: 8, Envs: []string{long}}, DefaultParams())
	if err == nil || len(err.Error()) > 1000 || !strings.Contains(err.Error(), "100000 bytes") {
		t.Errorf("a 100 KB unknown environment: a message of %d bytes; want it cut, saying its length", len(fmt.Sprint(err)))
	}
	empty := graph.New(nil, nil, nil)
	if _, err := Select(empty, nil, nil, Request{Size: 1, GroupSize: 8}, DefaultParams()); !errors.Is(err, ErrEmptyCatalogue) {
		t.Errorf("empty catalogue: got %v", err)
	}
}

// TestUnknownExcludedEnvExcludesNothing: PROTOCOL.md's exclude_envs is "never these
// environments"; one with no tasks (not in the catalogue yet, or retired) is never chosen
// anyway, so the request is served as without it, with the others still excluded. (It was
// refused, so a trainer that always excludes an environment got only error files.)
func TestUnknownExcludedEnvExcludesNothing(t *testing.T) {
	w := randomWorld(t, 50, 3, 1, 0.5)
	want, err := Select(w.g, w.preds, w.tasks, Request{Size: 8, GroupSize: 8, Seed: 3, ExcludeEnvs: w.g.Envs[:1]}, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	got, err := Select(w.g, w.preds, w.tasks, Request{Size: 8, GroupSize: 8, Seed: 3,
		ExcludeEnvs: []string{"nope", w.g.Envs[0], "zzz"}}, DefaultParams())
	if err != nil {
		t.Fatalf("exclude_envs naming environments that do not exist: %v; want them to exclude nothing", err)
	}
	if !reflect.DeepEqual(got.Picks, want.Picks) || got.Eligible != want.Eligible {
		t.Errorf("exclude_envs with unknown names chose %v (%d eligible); want %v (%d) as without them",
			got.Picks, got.Eligible, want.Picks, want.Eligible)
	}
	for _, pk := range got.Picks {
		if w.g.Nodes[pk.Node].Env == 0 {
			t.Errorf("an excluded environment's task was chosen: %+v", pk)
		}
	}
}

func TestSameBatchWhateverTheCPUs(t *testing.T) {
	// Large enough for propagate and batcher to split their passes over the CPUs.
	w := randomWorld(t, 40_000, 7, 11, 0.5)
	req := Request{Size: 300, GroupSize: 8, Step: w.step, Seed: 5}
	run := func(procs int) ([]propagate.Prediction, Batch) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		preds, err := propagate.Predict(w.g, w.tasks, w.step, propagate.DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		preds = slices.Clone(preds)
		b, err := Select(w.g, preds, w.tasks, req, DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		return preds, b
	}
	p1, b1 := run(1)
	p4, b4 := run(4)
	if !slices.Equal(p1, p4) {
		t.Error("predictions depend on the number of CPUs")
	}
	if !slices.Equal(b1.Picks, b4.Picks) {
		t.Error("the batch depends on the number of CPUs")
	}
}

// TestRepeatRoundsDoNotScaleWithTheGraph: a batch of repeats over one small environment is
// many rounds (here 2,000), and a round must cost what it chooses, not a pass over every
// environment and task of the graph: a request of 100,000 repeats over a 100,000-task
// catalogue took 24 CPU-seconds, every request behind it waiting (BenchmarkRepeats). The
// measure here is deterministic: the allocations of one batch may not grow with the number of
// environments the request leaves out.
func TestRepeatRoundsDoNotScaleWithTheGraph(t *testing.T) {
	allocs := func(envs int) float64 {
		w := randomWorld(t, envs*5, envs, 1, 0.5)
		e := w.g.Nodes[0].Env
		eligible := 0
		for _, nd := range w.g.Nodes {
			if nd.Env == e {
				eligible++
			}
		}
		req := Request{Size: 2000 * eligible, GroupSize: 8, Step: w.step, Seed: 1, AllowRepeats: true,
			Envs: []string{w.g.Envs[e]}}
		var sel Selector
		b, err := sel.Select(w.g, w.preds, w.tasks, req, DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Picks) != req.Size || b.Eligible != eligible {
			t.Fatalf("%d picks of %d eligible; want %d of %d", len(b.Picks), b.Eligible, req.Size, eligible)
		}
		return testing.AllocsPerRun(2, func() {
			if _, err := sel.Select(w.g, w.preds, w.tasks, req, DefaultParams()); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(100), allocs(2000)
	t.Logf("allocations per batch: %.0f with 100 environments, %.0f with 2,000", small, large)
	if large > 1.5*small {
		t.Errorf("a batch of 2,000 rounds allocates %.0f times with 2,000 environments and %.0f with 100: "+
			"each round pays for environments it cannot choose from", large, small)
	}
}

// TestRandomSlotsFollowTheirReturn: a batch has round(RandomShare·RandomReturn·size) random
// slots, but at least one whenever RandomShare alone gives one, so that what random choice
// returns is still measured; none when RandomShare gives none.
func TestRandomSlotsFollowTheirReturn(t *testing.T) {
	w := randomWorld(t, 2000, 8, 3, 0.5)
	cases := []struct {
		share, ret float64
		size, want int
	}{
		{0.05, 1, 64, 3},
		{0.05, 0.6, 64, 2},
		{0.05, 0.4, 64, 1},
		{0.05, 0, 64, 1},  // the floor: still measured
		{0.05, 2, 64, 6},  // a caller may give more than the share
		{0.05, 0.5, 8, 0}, // round(0.4) is no slot with or without the return
		{0, 1, 64, 0},
		{0.5, 2, 16, 16}, // never more than the round
	}
	for _, c := range cases {
		p := DefaultParams()
		p.RandomShare, p.RandomReturn = c.share, c.ret
		req := Request{Size: c.size, GroupSize: 8, Step: w.step, Seed: 11}
		b := w.sel(t, req, p)
		checkBatch(t, w, req, p, b)
		got := 0
		for _, pk := range b.Picks {
			if pk.Random {
				got++
			}
		}
		if got != c.want {
			t.Errorf("share %v, return %v, size %d: %d random slots, want %d", c.share, c.ret, c.size, got, c.want)
		}
	}
	p := DefaultParams()
	p.RandomReturn = -1
	if err := p.Validate(); !errors.Is(err, ErrParams) {
		t.Errorf("random return -1: %v, want ErrParams", err)
	}
}
