package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

// smallScenario is the default world cut to 8 environments of about 60 tasks, for tests that
// only need the machinery to run.
func smallScenario() Scenario {
	sc := DefaultScenario()
	sc.Name, sc.Envs, sc.TaskMedian, sc.MaxTasks = "small-test", 8, 60, 150
	return sc
}

// shortConfig is a small comparison that keeps the suite fast.
func shortConfig(steps int, policies ...string) Config {
	cfg := DefaultConfig()
	cfg.Seeds, cfg.SeedBase, cfg.Steps, cfg.Policies = 2, 7, steps, policies
	return cfg
}

func TestWorldDeterministicPerSeed(t *testing.T) {
	for _, name := range ScenarioNames() {
		t.Run(name, func(t *testing.T) {
			sc, err := ScenarioByName(name)
			if err != nil {
				t.Fatal(err)
			}
			a, b, c := NewWorld(sc, 42), NewWorld(sc, 42), NewWorld(sc, 43)
			if !reflect.DeepEqual(a, b) {
				t.Fatal("two worlds of the same seed differ")
			}
			if reflect.DeepEqual(a.Catalog(), c.Catalog()) {
				t.Fatal("worlds of different seeds have the same catalogue")
			}
		})
	}
}

func TestWorldShape(t *testing.T) {
	w := NewWorld(DefaultScenario(), 1)
	if len(w.Envs) != 20 || len(w.Tasks) < 1500 || len(w.Tasks) > 6000 {
		t.Fatalf("%d environments and %d tasks, want 20 and a few thousand", len(w.Envs), len(w.Tasks))
	}
	smallest, largest := len(w.Tasks), 0
	for _, ts := range w.EnvTasks {
		smallest, largest = min(smallest, len(ts)), max(largest, len(ts))
	}
	if largest < 3*smallest {
		t.Errorf("environment sizes %d to %d: want unequal sizes", smallest, largest)
	}
	keys := map[string]bool{}
	for _, r := range w.Catalog() {
		if r.Env == "" || r.Task == "" || r.Text == "" || len(r.Tools) == 0 {
			t.Fatalf("catalogue row without env, task, text or tools: %+v", r)
		}
		keys[r.Env+"/"+r.Task] = true
	}
	if len(keys) != len(w.Tasks) {
		t.Fatalf("%d distinct keys for %d tasks", len(keys), len(w.Tasks))
	}
	dups := 0
	for _, tk := range w.Tasks {
		if tk.DupOf >= 0 {
			dups++
			if !reflect.DeepEqual(tk.Needs, w.Tasks[tk.DupOf].Needs) {
				t.Fatal("a near-duplicate needs other skills than its original")
			}
		}
	}
	if dups == 0 {
		t.Error("no near-duplicate tasks")
	}
}

func TestHeldOutNotInCatalogue(t *testing.T) {
	w := NewWorld(DefaultScenario(), 3)
	texts := map[string]bool{}
	for _, tk := range w.Tasks {
		texts[tk.Record.Env+"/"+tk.Record.Task] = true
	}
	for e, held := range w.EnvHeld {
		if len(held) != w.Scenario.HeldOutPerEnv {
			t.Fatalf("env %d has %d held-out tasks, want %d", e, len(held), w.Scenario.HeldOutPerEnv)
		}
		for _, h := range held {
			if r := w.HeldOut[h].Record; texts[r.Env+"/"+r.Task] {
				t.Fatalf("held-out task %s/%s is in the catalogue", r.Env, r.Task)
			}
		}
	}
}

func TestLearnerIgnoresDegenerateGroups(t *testing.T) {
	w := NewWorld(DefaultScenario(), 5)
	var groups []Group
	for i := range 64 {
		groups = append(groups, Group{Task: i, Successes: (i % 2) * 8, Size: 8}) // all 0 or all 8
	}
	trained, idle := NewLearner(w), NewLearner(w)
	for step := 1; step <= 5; step++ {
		trained.Update(step, groups)
		idle.Update(step, nil)
	}
	if !reflect.DeepEqual(trained.level, idle.level) || !reflect.DeepEqual(trained.memory, idle.memory) {
		t.Fatal("degenerate groups changed the learner")
	}
	informative := NewLearner(w)
	mixed := append([]Group(nil), groups...)
	mixed[0].Successes = 4
	informative.Update(1, mixed)
	if informative.P(0) <= idle.P(0)-1e-12 || reflect.DeepEqual(informative.level, NewLearner(w).level) {
		t.Fatal("an informative group taught nothing")
	}
}

func TestLearnerImprovesWithSignal(t *testing.T) {
	w := NewWorld(DefaultScenario(), 5)
	l := NewLearner(w)
	before := l.Eval()
	for step := 1; step <= 30; step++ {
		var groups []Group
		for i := range 64 {
			groups = append(groups, Group{Task: (step*64 + i) % len(w.Tasks), Successes: 4, Size: 8})
		}
		l.Update(step, groups)
	}
	if l.Eval() <= before+0.05 {
		t.Fatalf("held-out score %.3f after 30 informative steps, from %.3f", l.Eval(), before)
	}
}

func TestRandomDegenerateShareRealistic(t *testing.T) {
	res, err := Run(context.Background(), shortConfig(20, "random"))
	if err != nil {
		t.Fatal(err)
	}
	p := res.Summary.Policies[0]
	if p.Degenerate.Median < 0.3 || p.Degenerate.Median > 0.65 {
		t.Fatalf("random wastes %.0f%% of its groups, want 30%% to 65%% (real agent RL: about 40-50%%)", 100*p.Degenerate.Median)
	}
}

func TestOracleBeatsRandom(t *testing.T) {
	res, err := Run(context.Background(), shortConfig(40, "random", "oracle"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range res.Traces["random"] {
		r, o := res.Traces["random"][i], res.Traces["oracle"][i]
		if o.Score[40] <= r.Score[40] {
			t.Errorf("seed %d: oracle %.3f at step 40, random %.3f", r.Seed, o.Score[40], r.Score[40])
		}
		if o.DegGroups[40] >= r.DegGroups[40] {
			t.Errorf("seed %d: oracle wasted %d groups, random %d", r.Seed, o.DegGroups[40], r.DegGroups[40])
		}
	}
}

func TestPairedSeeds(t *testing.T) {
	cfg := shortConfig(3, "random", "uniform-env", "mopps")
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range cfg.Seeds {
		start := res.Traces["random"][i].Score[0]
		for _, p := range cfg.Policies {
			tr := res.Traces[p][i]
			if tr.Seed != cfg.SeedBase+uint64(i) || tr.Score[0] != start {
				t.Fatalf("%s seed %d starts at %.6f, random at %.6f: worlds are not paired", p, tr.Seed, tr.Score[0], start)
			}
		}
	}
	again, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Traces, again.Traces) {
		t.Fatal("the same config gave different traces")
	}
	// The same task at the same step with the same probability gets the same rewards.
	w := NewWorld(cfg.Scenario, 9)
	a, b := NewLearner(w), NewLearner(w)
	for t0 := range 50 {
		if a.Rollout(t0, 4, 0, 8) != b.Rollout(t0, 4, 0, 8) {
			t.Fatal("rollouts of two learners in the same state differ")
		}
	}
}

func TestEveryPolicyRuns(t *testing.T) {
	cfg := shortConfig(4, PolicyNames()...)
	cfg.Seeds, cfg.Scenario = 1, smallScenario()
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range PolicyNames() {
		tr := res.Traces[p][0]
		per := int64(cfg.BatchSize * cfg.GroupSize)
		switch p {
		case "dapo", "greso":
			if tr.Rollouts[4] < 4*per || tr.Rollouts[4] > 4*dapoChunks*per {
				t.Errorf("%s spent %d rollouts in 4 steps", p, tr.Rollouts[4])
			}
		default:
			if tr.Rollouts[4] != 4*per {
				t.Errorf("%s spent %d rollouts in 4 steps, want %d", p, tr.Rollouts[4], 4*per)
			}
		}
	}
}

func TestEnvschedChoosesDistinctTasks(t *testing.T) {
	w := NewWorld(smallScenario(), 11)
	cfg := shortConfig(5, "envsched")
	p, err := NewPolicy("envsched", w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLearner(w)
	for step := 1; step <= 5; step++ {
		v := &View{Step: step, Size: 64, Group: 8, World: w, Rand: stepRand(w.Seed, "envsched", step), truth: l.P}
		chosen, err := p.Choose(v)
		if err != nil {
			t.Fatal(err)
		}
		seen, envs := map[int]bool{}, map[int]bool{}
		for _, c := range chosen {
			if seen[c] {
				t.Fatalf("step %d: task %d twice", step, c)
			}
			seen[c], envs[w.Tasks[c].Env] = true, true
		}
		if len(chosen) != 64 || len(envs) < 6 {
			t.Fatalf("step %d: %d tasks from %d environments, want 64 from most of the 8", step, len(chosen), len(envs))
		}
		var groups []Group
		for _, c := range chosen {
			groups = append(groups, l.Rollout(c, step, 0, 8))
		}
		p.Observe(step, groups)
		l.Update(step, groups)
	}
}

func TestBootstrapMedian(t *testing.T) {
	iv := bootstrapMedian([]float64{1, 2, 3, 4, 100}, 1)
	if iv.Median != 3 || iv.Lo > 3 || iv.Hi < 3 || iv.Lo < 1 || iv.Hi > 100 {
		t.Fatalf("median interval %+v of 1,2,3,4,100", iv)
	}
	if m := median([]float64{1, math.Inf(1), math.Inf(1)}); !math.IsInf(m, 1) {
		t.Fatalf("median with most seeds never reaching a target is %v, want +Inf", m)
	}
}

func TestOutputs(t *testing.T) {
	cfg := shortConfig(12, "envsched", "random")
	cfg.Scenario = smallScenario()
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	if err := WriteTable(&table, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"policy", "envsched", "random", "@10", "degenerate", "(the headline needs", "task@12", "task beats@40", "(the per-task headline needs"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, res); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Summary struct{ Policies []map[string]any }
		Curves  map[string]struct {
			Score     []float64
			TaskScore []float64 `json:"task_score"`
		}
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("json does not parse: %v", err)
	}
	if len(back.Summary.Policies) != 2 || len(back.Curves["envsched"].Score) != 13 || len(back.Curves["envsched"].TaskScore) != 13 {
		t.Fatalf("json has %d policies and %d curve points", len(back.Summary.Policies), len(back.Curves["envsched"].Score))
	}
	dir := t.TempDir()
	paths, err := WritePlots(dir, res)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{PlotScoreByStep, PlotScoreByRollouts, PlotDegenerate} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil || img.Bounds().Dx() < 100 {
			t.Fatalf("%s is not a PNG plot: %v", name, err)
		}
	}
	if len(paths) != 3 {
		t.Fatalf("%d plots written", len(paths))
	}
}

func TestConfigValidate(t *testing.T) {
	cases := map[string]func(*Config){
		"no seeds":      func(c *Config) { c.Seeds = 0 },
		"group of one":  func(c *Config) { c.GroupSize = 1 },
		"unknown":       func(c *Config) { c.Policies = []string{"nope"} },
		"no policies":   func(c *Config) { c.Policies = nil },
		"no steps":      func(c *Config) { c.Steps = 0 },
		"empty batches": func(c *Config) { c.BatchSize = 0 },
		// beyond the bounds: out of memory, or a step deaf to signals for hours (hostile14b)
		"10^11 steps":      func(c *Config) { c.Steps = 1e11 },
		"10^11 seeds":      func(c *Config) { c.Seeds = 1e11 },
		"groups of 10^11":  func(c *Config) { c.GroupSize = 1e11 },
		"batches of 10^11": func(c *Config) { c.BatchSize = 1e11 },
		"curves of 10^9 steps": func(c *Config) {
			c.Seeds, c.Steps = MaxSeeds, MaxSteps
		},
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultConfig()
			f(&cfg)
			if err := cfg.Validate(); err == nil {
				t.Fatal("accepted")
			}
		})
	}
	if _, err := ScenarioByName("nope"); err == nil {
		t.Fatal("unknown scenario accepted")
	}
}

// TestWorkersAtMostOnePerRun: --workers 10^11 started that many goroutines and died out of
// memory; the runs are seeds × policies, and no more goroutines than runs are started.
func TestWorkersAtMostOnePerRun(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Seeds, cfg.Policies = 2, []string{"random", "oracle"}
	for _, w := range []int{1e11, 5} {
		cfg.Workers = w
		if got := workers(cfg); got != 4 {
			t.Errorf("--workers %d for 4 runs: %d goroutines, want 4", w, got)
		}
	}
	cfg.Workers = 3
	if got := workers(cfg); got != 3 {
		t.Errorf("--workers 3 for 4 runs: %d goroutines, want 3", got)
	}
}

func TestPairedWins(t *testing.T) {
	mk := func(score float64, deg int64) Trace {
		tr := newTrace("x", 1, 40)
		for s := 1; s <= 40; s++ {
			tr.Score[s] = score
			tr.Rollouts[s] = int64(s) * 512
			tr.Groups[s] = int64(s) * 64
			tr.DegGroups[s] = int64(s) * deg
		}
		return tr
	}
	es := []Trace{mk(0.6, 10), mk(0.4, 30)}
	other := []Trace{mk(0.5, 20), mk(0.5, 20)}
	random := []Trace{mk(0.45, 30), mk(0.45, 30)}
	w := pairedWins(es, other, random)
	for k, want := range map[string]Share{"score_10": 0.5, "score_40": 0.5, "degenerate_10": 0.5, "degenerate": 0.5, "to_target": 0} { // seed 1 ties on rollouts: not a win
		if w[k] != want {
			t.Errorf("%s: %v, want %v", k, w[k], want)
		}
	}
}

// TestSeedDoneOncePerSeedInOrder: SeedDone is called once per seed, after all its policies ran,
// with the count of seeds done going 1, 2, 3.
func TestSeedDoneOncePerSeedInOrder(t *testing.T) {
	cfg := shortConfig(3, "random", "uniform-env")
	cfg.Seeds, cfg.SeedBase, cfg.Scenario, cfg.Workers = 3, 7, smallScenario(), 2
	var (
		mu     sync.Mutex
		seeds  []uint64
		counts []int
		runs   int
	)
	cfg.Progress = func(done, _ int) {
		mu.Lock()
		runs = done
		mu.Unlock()
	}
	cfg.SeedDone = func(seed uint64, done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if total != 3 {
			t.Errorf("total seeds %d, want 3", total)
		}
		seeds, counts = append(seeds, seed), append(counts, done)
	}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	slices.Sort(seeds)
	if fmt.Sprint(seeds) != "[7 8 9]" || fmt.Sprint(counts) != "[1 2 3]" || runs != 6 {
		t.Errorf("seeds %v, counts %v, runs %d; want [7 8 9], [1 2 3], 6", seeds, counts, runs)
	}
}
