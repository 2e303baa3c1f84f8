// Command quotabench compares quota designs of envsched in the simulator under both held-out
// weightings (per environment, Learner.Eval; per catalogue task, Learner.EvalTasks). Random is
// run once per scenario and paired with envsched run at each QuotaSize α:
//
//	quotabench -seed-base 1000 -scenarios default,bimodal -alphas 0,0.5,1 [-real-catalog FILE]
//
// Per scenario and α it prints one line: envsched's median held-out score at step 40 against the
// median of random's best in 120 steps and the share of seeds where the first beats the second,
// per environment and per task; the best scores; the degenerate share over the run and steps 1-10.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/envsched/envsched/sim"
)

func main() {
	base := flag.Uint64("seed-base", 1000, "first seed")
	seeds := flag.Int("seeds", 20, "seeds")
	scen := flag.String("scenarios", "default,bimodal,real-catalog,noise,drift,small-envs", "scenarios")
	alphas := flag.String("alphas", "0,0.5,1", "QuotaSize values")
	workers := flag.Int("workers", 2, "parallel runs")
	real := flag.String("real-catalog", sim.DefaultRealCatalog, "real catalogue file")
	flag.Parse()
	if err := run(*base, *seeds, *workers, strings.Split(*scen, ","), *alphas, *real); err != nil {
		fmt.Fprintln(os.Stderr, "quotabench:", err)
		os.Exit(1)
	}
}

func run(base uint64, seeds, workers int, scenarios []string, alphaList, real string) error {
	var alphas []float64
	for _, a := range strings.Split(alphaList, ",") {
		f, err := strconv.ParseFloat(a, 64)
		if err != nil {
			return fmt.Errorf("alpha %q: %w", a, err)
		}
		alphas = append(alphas, f)
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
		for _, a := range alphas {
			if err := compare(cfg, rr, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// compare runs envsched with QuotaSize a and prints its line against random's runs rr.
func compare(cfg sim.Config, rr sim.Result, a float64) error {
	p := sim.DefaultEnvschedParams()
	p.Select.QuotaSize = a
	c := cfg
	c.Policies, c.Envsched = []string{"envsched"}, &p
	er, err := sim.Run(context.Background(), c)
	if err != nil {
		return err
	}
	c.Policies = []string{"envsched", "random"}
	sum := sim.Summarize(c, map[string][]sim.Trace{"envsched": er.Traces["envsched"], "random": rr.Traces["random"]})
	e := sum.Policies[0]
	fmt.Printf("%-12s a=%.2f env %.3f vs %.3f %3.0f%% | task %.3f vs %.3f %3.0f%% | best %.3f/%.3f deg %.1f%% deg10 %.1f%%\n",
		cfg.Scenario.Name, a, e.ScoreAt[40].Median, sum.RandomBest.Median, 100*float64(e.BeatsRandomBest),
		e.TaskScoreAt[40].Median, sum.RandomTaskBest.Median, 100*float64(e.TaskBeatsRandomBest),
		e.Best.Median, e.TaskBest.Median, 100*e.Degenerate.Median, 100*e.Degenerate10.Median)
	return nil
}
