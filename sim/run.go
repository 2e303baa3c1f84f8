// Package sim is envsched's simulated agent-RL trainer: a generative model of environments,
// skills and tasks with catalogue text, a GRPO-like learner, envsched and the published
// baselines behind one Policy interface, and a runner that compares them on paired seeds.
//
// Everything is deterministic for a seed: the world, the held-out set, the rollouts' luck (a
// counter-based hash of seed, step, task and index) and every policy's own random choices.
package sim

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"runtime"
	"sync"
)

// ErrConfig is wrapped by every error of Config.Validate.
var ErrConfig = errors.New("invalid simulation config")

// Config is one comparison: policies × seeds on one scenario.
type Config struct {
	Scenario  Scenario
	Policies  []string // names from PolicyNames or ExtraPolicyNames
	Seeds     int      // number of seeds
	SeedBase  uint64   // seeds are SeedBase, SeedBase+1, …
	Steps     int      // training steps per run
	BatchSize int      // B
	GroupSize int      // G
	Workers   int      // goroutines; 0 means one per CPU
	// Envsched overrides the parameters of the envsched policy and its ablations; nil means
	// the packages' defaults.
	Envsched *EnvschedParams
	// Progress, when set, is called after every finished (policy, seed) run; it must be safe
	// for concurrent use.
	Progress func(done, total int)
	// SeedDone, when set, is called once per seed when every policy's run of that seed is done,
	// with the seed and how many seeds are done; it must be safe for concurrent use. Calls come
	// in the order seeds finish, with seedsDone counting 1, 2, … up to Seeds.
	SeedDone func(seed uint64, seedsDone, seeds int)
}

// DefaultConfig is the benchmark's setting: the default scenario, every policy, 20 seeds
// from 1, 120 steps, B = 64, G = 8.
func DefaultConfig() Config {
	return Config{
		Scenario: DefaultScenario(), Policies: PolicyNames(), Seeds: 20, SeedBase: 1,
		Steps: 120, BatchSize: 64, GroupSize: 8,
	}
}

// Bounds of a Config. Every world is built before the runs (about 3 MB each), every run keeps
// its curves (48 bytes a step), and a step rolls out BatchSize × GroupSize rollouts without
// looking at the context: beyond these, `envsched sim` died with "fatal error: runtime: out of
// memory" (--steps or --seeds of 10^11), or ran one step for hours deaf to SIGINT and SIGTERM
// (--group-size 10^11). BatchSize and GroupSize have a request's bounds.
const (
	MaxSeeds      = 1000
	MaxSteps      = 100_000
	MaxBatchSize  = 100_000
	MaxGroupSize  = 1024
	MaxTraceSteps = 20_000_000 // seeds × policies × steps: about 1 GB of curves
)

// Validate reports the first bad field.
func (c Config) Validate() error {
	switch {
	case c.Seeds < 1 || c.Seeds > MaxSeeds:
		return fmt.Errorf("%w: seeds is %d, want 1 to %d", ErrConfig, c.Seeds, MaxSeeds)
	case c.Steps < 1 || c.Steps > MaxSteps:
		return fmt.Errorf("%w: steps is %d, want 1 to %d", ErrConfig, c.Steps, MaxSteps)
	case c.BatchSize < 1 || c.BatchSize > MaxBatchSize:
		return fmt.Errorf("%w: batch size is %d, want 1 to %d", ErrConfig, c.BatchSize, MaxBatchSize)
	case c.GroupSize < 2 || c.GroupSize > MaxGroupSize:
		return fmt.Errorf("%w: group size is %d, want 2 to %d", ErrConfig, c.GroupSize, MaxGroupSize)
	case len(c.Policies) == 0:
		return fmt.Errorf("%w: no policies", ErrConfig)
	case c.Seeds*len(c.Policies)*c.Steps > MaxTraceSteps:
		return fmt.Errorf("%w: %d seeds × %d policies × %d steps is more than %d steps to keep curves of; "+
			"run fewer at once", ErrConfig, c.Seeds, len(c.Policies), c.Steps, MaxTraceSteps)
	}
	for _, p := range c.Policies {
		if !knownPolicy(p) {
			return fmt.Errorf("%w: unknown policy %q (known: %v)", ErrConfig, p, append(PolicyNames(), ExtraPolicyNames()...))
		}
	}
	return nil
}

func knownPolicy(name string) bool {
	if _, ok := envschedVariant(name); ok {
		return true // every variant, also those PolicyNames leaves out of "all"
	}
	for _, p := range PolicyNames() {
		if p == name {
			return true
		}
	}
	return false
}

// Trace is one policy's run on one seed. Index 0 of Score is before any training; index s of
// every slice is after step s.
type Trace struct {
	Policy     string
	Seed       uint64
	Score      []float64 // held-out score, every environment weighed the same (Learner.Eval)
	TaskScore  []float64 // held-out score, every catalogue task weighed the same (Learner.EvalTasks)
	Degenerate []float64 // share of this step's rolled-out groups that were degenerate (index 0 unused)
	Rollouts   []int64   // rollouts spent so far
	Groups     []int64   // groups rolled out so far
	DegGroups  []int64   // degenerate groups so far
	// Calib is the policy's calibration when it is Calibrated, else nil.
	Calib *Calibration
	// Retry is the policy's re-try calibration when it is RetryCalibrated, else nil.
	Retry *RetryCalibration `json:"-"`
	// Steps is the policy's early steps' calibration when it is StepCalibrated, else nil.
	Steps *StepCalibration `json:"-"`
}

// Result is every trace of a comparison and its summary.
type Result struct {
	Config  Config             `json:"-"`
	Traces  map[string][]Trace `json:"-"` // by policy, in seed order
	Summary Summary
}

// Run runs every policy on every seed, in parallel, and summarises. It stops early with
// ctx's error.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	worlds := make([]*World, cfg.Seeds)
	for i := range worlds {
		worlds[i] = NewWorld(cfg.Scenario, cfg.SeedBase+uint64(i))
	}
	traces, err := runJobs(ctx, cfg, worlds)
	if err != nil {
		return Result{}, err
	}
	res := Result{Config: cfg, Traces: traces}
	res.Summary = Summarize(cfg, traces)
	return res, nil
}

type job struct {
	policy string
	seed   int
}

func runJobs(ctx context.Context, cfg Config, worlds []*World) (map[string][]Trace, error) {
	traces := map[string][]Trace{}
	for _, p := range cfg.Policies {
		traces[p] = make([]Trace, len(worlds))
	}
	jobs := make(chan job)
	var (
		mu        sync.Mutex
		done      int
		perSeed   = make([]int, len(worlds))
		seedsDone int
		firstErr  error
		wg        sync.WaitGroup
	)
	total := len(worlds) * len(cfg.Policies)
	for range workers(cfg) {
		wg.Go(func() {
			for j := range jobs {
				tr, err := RunOne(ctx, cfg, worlds[j.seed], j.policy)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				traces[j.policy][j.seed] = tr
				done++
				d := done
				perSeed[j.seed]++
				seedFinished := err == nil && perSeed[j.seed] == len(cfg.Policies)
				if seedFinished {
					seedsDone++
				}
				sd := seedsDone
				if seedFinished && cfg.SeedDone != nil {
					cfg.SeedDone(cfg.SeedBase+uint64(j.seed), sd, len(worlds)) // under mu: calls stay in order
				}
				mu.Unlock()
				if cfg.Progress != nil {
					cfg.Progress(d, total)
				}
			}
		})
	}
	feed(ctx, jobs, cfg, len(worlds))
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return traces, firstErr
}

// workers is how many goroutines run the jobs: cfg.Workers (one per CPU when 0 or less), at
// most one per run (--workers 10^11 started that many and died out of memory).
func workers(cfg Config) int {
	n := runtime.NumCPU()
	if cfg.Workers > 0 {
		n = cfg.Workers
	}
	return max(1, min(n, cfg.Seeds*len(cfg.Policies)))
}

// feed queues jobs seed-major so that partial progress covers every policy.
func feed(ctx context.Context, jobs chan<- job, cfg Config, seeds int) {
	defer close(jobs)
	for s := range seeds {
		for _, p := range cfg.Policies {
			select {
			case jobs <- job{policy: p, seed: s}:
			case <-ctx.Done():
				return
			}
		}
	}
}

// RunOne trains a fresh learner of world w with the named policy for cfg.Steps steps.
func RunOne(ctx context.Context, cfg Config, w *World, name string) (Trace, error) {
	p, err := NewPolicy(name, w, cfg)
	if err != nil {
		return Trace{}, err
	}
	l := NewLearner(w)
	tr := newTrace(name, w.Seed, cfg.Steps)
	tr.Score[0], tr.TaskScore[0] = l.Eval(), l.EvalTasks()
	for step := 1; step <= cfg.Steps; step++ {
		if err := ctx.Err(); err != nil {
			return tr, err
		}
		v := &View{Step: step, Size: cfg.BatchSize, Group: cfg.GroupSize, World: w,
			Rand: stepRand(w.Seed, name, step), truth: l.P}
		chosen, err := p.Choose(v)
		if err != nil {
			return tr, err
		}
		rolled, trained := rollOut(l, p, chosen, step, cfg)
		p.Observe(step, rolled)
		l.Update(step, trained)
		tr.record(step, l, rolled, cfg.GroupSize)
	}
	if c, ok := p.(Calibrated); ok {
		tr.Calib = c.Calibration()
	}
	if c, ok := p.(RetryCalibrated); ok {
		tr.Retry = c.RetryCalibration()
	}
	if c, ok := p.(StepCalibrated); ok {
		tr.Steps = c.StepCalibration()
	}
	return tr, nil
}

func newTrace(name string, seed uint64, steps int) Trace {
	return Trace{
		Policy: name, Seed: seed,
		Score: make([]float64, steps+1), TaskScore: make([]float64, steps+1), Degenerate: make([]float64, steps+1),
		Rollouts: make([]int64, steps+1), Groups: make([]int64, steps+1), DegGroups: make([]int64, steps+1),
	}
}

// record notes step's held-out scores (both weightings) from l and its rolled-out groups.
func (tr *Trace) record(step int, l *Learner, rolled []Group, g int) {
	deg := 0
	for _, gr := range rolled {
		if gr.Degenerate() {
			deg++
		}
	}
	tr.Score[step], tr.TaskScore[step] = l.Eval(), l.EvalTasks()
	if len(rolled) > 0 {
		tr.Degenerate[step] = float64(deg) / float64(len(rolled))
	}
	tr.Rollouts[step] = tr.Rollouts[step-1] + int64(len(rolled)*g)
	tr.Groups[step] = tr.Groups[step-1] + int64(len(rolled))
	tr.DegGroups[step] = tr.DegGroups[step-1] + int64(deg)
}

// rollOut rolls the chosen tasks out. A plain policy trains on all of its groups; an
// Oversampler's candidates are rolled out B at a time until B informative groups are in hand.
func rollOut(l *Learner, p Policy, chosen []int, step int, cfg Config) (rolled, trained []Group) {
	if _, ok := p.(Oversampler); !ok {
		for _, t := range chosen {
			rolled = append(rolled, l.Rollout(t, step, 0, cfg.GroupSize))
		}
		return rolled, rolled
	}
	for start := 0; start < len(chosen) && len(trained) < cfg.BatchSize; start += cfg.BatchSize {
		for _, t := range chosen[start:min(start+cfg.BatchSize, len(chosen))] {
			g := l.Rollout(t, step, 0, cfg.GroupSize)
			rolled = append(rolled, g)
			if !g.Degenerate() && len(trained) < cfg.BatchSize {
				trained = append(trained, g)
			}
		}
	}
	return rolled, trained
}

// stepRand is the random source of one policy at one step of one seed.
func stepRand(seed uint64, policy string, step int) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(policy))
	return rand.New(rand.NewPCG(seed, mix(h.Sum64()^uint64(step))))
}
