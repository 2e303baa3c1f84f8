// Command selbench compares variants of envsched's selection parameters in the simulator under
// both held-out weightings (per environment, Learner.Eval; per catalogue task,
// Learner.EvalTasks). Random is run once per scenario and paired with every variant:
//
//	selbench -seed-base 1000 -scenarios default,bimodal -variants 'base;pen2:pen=2;cov:cov=0.6'
//
// A variant is NAME or NAME:key=value,key=value over the keys cov (coverage weight), pen
// (similarity penalty), rshare (random share), qsize (quota size), qsmooth (quota smoothing),
// minshare, maxshare, stale (stale rounds), ucount (uncertain count), spread (batcher
// SpreadWeight), exploit (0 variance, 1 informative, 2 spread), fresh (batcher Fresh), overlap (batcher Overlap), trend (propagate RechosenTrend, 0 off) and fixedexp (1: coverage weight not moved by the exploration return). Per
// scenario and variant it prints one line: envsched's median held-out score at step 40 against
// the median of random's best in 120 steps and the share of seeds where the first beats the
// second, per environment and per task, with the median per-seed margin; the best scores; the
// degenerate share over the run and in steps 1-10. With -paired, every variant after the first
// also gets its paired difference from the first at step 40 (mean ± standard error over the
// seeds) and the seeds whose standing against random's best it changes. It replaces quotabench: its QuotaSize runs are
// -variants 'a0:qsize=0;a0.5:qsize=0.5;a1:qsize=1'.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
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
	paired := flag.Bool("paired", false, "also print, for every variant after the first, its paired difference from the first per seed")
	flag.Parse()
	if err := run(*base, *seeds, *workers, strings.Split(*scen, ","), strings.Split(*variants, ";"), *real, *paired); err != nil {
		fmt.Fprintln(os.Stderr, "selbench:", err)
		os.Exit(1)
	}
}

func run(base uint64, seeds, workers int, scenarios, variants []string, real string, paired bool) error {
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
		var first []sim.Trace
		for i, v := range variants {
			es, err := compare(cfg, rr, v, ps[i])
			if err != nil {
				return err
			}
			if i == 0 {
				first = es
			} else if paired {
				printPaired(name, v, first, es, rr.Traces["random"], base)
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
		case "fresh":
			s.Fresh = f
		case "overlap":
			s.Overlap = f
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

// compare runs envsched with parameters p, prints its line against random's runs rr and
// returns envsched's traces.
func compare(cfg sim.Config, rr sim.Result, name string, p sim.EnvschedParams) ([]sim.Trace, error) {
	c := cfg
	c.Policies, c.Envsched = []string{"envsched"}, &p
	er, err := sim.Run(context.Background(), c)
	if err != nil {
		return nil, err
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
	return es, nil
}

// printPaired prints, per weighting, the mean and standard error over seeds of the variant's
// step-40 score minus the first variant's (es against first), and the seeds whose standing
// against random's best (rs) differs between them: "+N" ahead only with the variant, "-N"
// only with the first.
func printPaired(scenario, name string, first, es, rs []sim.Trace, base uint64) {
	for _, w := range []struct {
		name  string
		score func(sim.Trace) []float64
	}{{"env", func(t sim.Trace) []float64 { return t.Score }}, {"task", func(t sim.Trace) []float64 { return t.TaskScore }}} {
		var d []float64
		var flips []string
		m0, m1 := margins(first, rs, w.score), margins(es, rs, w.score)
		for i := range es {
			d = append(d, w.score(es[i])[40]-w.score(first[i])[40])
			switch {
			case m1[i] > 0 && m0[i] <= 0:
				flips = append(flips, fmt.Sprintf("+%d", base+uint64(i)))
			case m1[i] <= 0 && m0[i] > 0:
				flips = append(flips, fmt.Sprintf("-%d", base+uint64(i)))
			}
		}
		mean, se := meanSE(d)
		fmt.Printf("%-12s %-22s paired %-4s @40 %+.4f ± %.4f (se, %d seeds) flips %v\n", scenario, name, w.name, mean, se, len(d), flips)
	}
}

// meanSE is the mean of x and its standard error.
func meanSE(x []float64) (float64, float64) {
	var s, ss float64
	for _, v := range x {
		s += v
	}
	m := s / float64(len(x))
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	if len(x) < 2 {
		return m, 0
	}
	return m, math.Sqrt(ss / float64(len(x)-1) / float64(len(x)))
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
