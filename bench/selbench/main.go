// Command selbench compares variants of envsched's selection parameters in the simulator under
// both held-out weightings (per environment, Learner.Eval; per catalogue task,
// Learner.EvalTasks). Random is run once per scenario and paired with every variant:
//
//	selbench -seed-base 1000 -scenarios default,bimodal -variants 'base;pen2:pen=2;cov:cov=0.6'
//
// A variant is NAME or NAME:key=value,key=value over the keys cov (coverage weight), pen
// (similarity penalty), rshare (random share), qsize (quota size), qsmooth (quota smoothing),
// minshare, maxshare, stale (stale rounds), ucount (uncertain count), spread (batcher
// SpreadWeight), exploit (0 variance, 1 informative, 2 spread), trend (propagate RechosenTrend, 0 off) and fixedexp (1: coverage weight not moved by the exploration return). Per
// scenario and variant it prints one line: envsched's median held-out score at step 40 against
// the median of random's best in 120 steps and the share of seeds where the first beats the
// second, per environment and per task, with the median per-seed margin; the best scores; the
// degenerate share over the run and in steps 1-10. It replaces quotabench: its QuotaSize runs are
// -variants 'a0:qsize=0;a0.5:qsize=0.5;a1:qsize=1'.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/envsched/envsched/batcher"
	"github.com/envsched/envsched/sim"
)

func main() {
	base := flag.Uint64("seed-base", 1000, "first seed")
	seeds := flag.Int("seeds", 20, "seeds")
	scen := flag.String("scenarios", "default,bimodal,real-catalog,noise,drift,small-envs", "scenarios")
	variants := flag.String("variants", "base", "variants, separated by ';'")
	workers := flag.Int("workers", 2, "parallel runs")
	real := flag.String("real-catalog", sim.DefaultRealCatalog, "real catalogue file")
	flag.Parse()
	if err := run(*base, *seeds, *workers, strings.Split(*scen, ","), strings.Split(*variants, ";"), *real); err != nil {
		fmt.Fprintln(os.Stderr, "selbench:", err)
		os.Exit(1)
	}
}

func run(base uint64, seeds, workers int, scenarios, variants []string, real string) error {
	ps := make([]sim.EnvschedParams, len(variants))
	for i, v := range variants {
		p, err := parse(v)
		if err != nil {
			return err
		}
		ps[i] = p
	}
	for _, name := range scenarios {
		sc, err := sim.ScenarioFor(name, real)
		if err != nil {
			return err
		}
		cfg := sim.DefaultConfig()
		cfg.Scenario, cfg.Seeds, cfg.SeedBase, cfg.Workers = sc, seeds, base, workers
		cfg.Policies = []string{"random"}
		rr, err := sim.Run(context.Background(), cfg)
		if err != nil {
			return err
		}
		for i, v := range variants {
			if err := compare(cfg, rr, v, ps[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// parse reads one variant: NAME or NAME:key=value,...
func parse(v string) (sim.EnvschedParams, error) {
	p := sim.DefaultEnvschedParams()
	_, kvs, ok := strings.Cut(v, ":")
	if !ok {
		return p, nil
	}
	for _, kv := range strings.Split(kvs, ",") {
		k, val, _ := strings.Cut(kv, "=")
		f, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return p, fmt.Errorf("variant %q: %s: %w", v, k, err)
		}
		s := &p.Select
		switch k {
		case "cov":
			s.CoverageWeight = f
		case "pen":
			s.SimPenalty = f
		case "rshare":
			s.RandomShare = f
		case "qsize":
			s.QuotaSize = f
		case "qsmooth":
			s.QuotaSmoothing = f
		case "minshare":
			s.MinShare = f
		case "maxshare":
			s.MaxShare = f
		case "stale":
			s.StaleRounds = f
		case "ucount":
			s.UncertainCount = f
		case "transfer":
			s.Transfer = f
		case "exploit":
			s.Exploit = batcher.Exploit(f)
		case "trend":
			p.Predict.RechosenTrend = f
		case "fixedexp":
			p.FixedExploration = f != 0
		default:
			return p, fmt.Errorf("variant %q: unknown key %q", v, k)
		}
	}
	return p, nil
}

// compare runs envsched with parameters p and prints its line against random's runs rr.
func compare(cfg sim.Config, rr sim.Result, name string, p sim.EnvschedParams) error {
	c := cfg
	c.Policies, c.Envsched = []string{"envsched"}, &p
	er, err := sim.Run(context.Background(), c)
	if err != nil {
		return err
	}
	c.Policies = []string{"envsched", "random"}
	es, rs := er.Traces["envsched"], rr.Traces["random"]
	sum := sim.Summarize(c, map[string][]sim.Trace{"envsched": es, "random": rs})
	e := sum.Policies[0]
	env := margins(es, rs, func(t sim.Trace) []float64 { return t.Score })
	task := margins(es, rs, func(t sim.Trace) []float64 { return t.TaskScore })
	fmt.Printf("%-12s %-22s env %.4f %3.0f%% %+.4f | task %.4f %3.0f%% %+.4f | min %3.0f%% | best %.3f/%.3f | deg %.1f%% deg10 %.1f%%\n",
		cfg.Scenario.Name, name, e.ScoreAt[40].Median, 100*share(env), median(env),
		e.TaskScoreAt[40].Median, 100*share(task), median(task), 100*min(share(env), share(task)),
		e.Best.Median, e.TaskBest.Median, 100*e.Degenerate.Median, 100*e.Degenerate10.Median)
	return nil
}

// margins is, per seed, envsched's score at step 40 minus random's best in the run.
func margins(es, rs []sim.Trace, score func(sim.Trace) []float64) []float64 {
	out := make([]float64, len(es))
	for i := range es {
		best := 0.0
		for _, x := range score(rs[i]) {
			best = max(best, x)
		}
		out[i] = score(es[i])[40] - best
	}
	return out
}

func share(m []float64) float64 {
	n := 0
	for _, x := range m {
		if x > 0 {
			n++
		}
	}
	return float64(n) / float64(len(m))
}

func median(m []float64) float64 {
	s := append([]float64(nil), m...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
