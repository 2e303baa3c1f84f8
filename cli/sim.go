package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"

	"github.com/envsched/envsched/sim"
)

func simCommand() *cli.Command {
	return &cli.Command{
		Name:  "sim",
		Usage: "compare envsched with baselines on the simulated trainer",
		Description: "sim runs envsched (the real graph, propagate and batcher code) and the baselines on a " +
			"simulated multi-environment agent-RL trainer, in process, on paired seeds: every policy of a seed " +
			"trains the same simulated model on the same world with the same held-out tasks. It prints per " +
			"policy the median held-out score at steps 10, 20, 40, 80 and 120, the share of degenerate groups, " +
			"the rollouts needed to reach random's final score and their ratio to envsched's, and writes PNG " +
			"plots into --out. Policies: " + strings.Join(sim.PolicyNames(), ", ") + " (the default list); named " +
			"with --policies only: " + strings.Join(sim.ExtraPolicyNames(), ", ") + ". Scenarios: " +
			strings.Join(sim.ScenarioNames(), ", ") + ", and real-catalog (the real agent tasks of --real-catalog; " +
			"absent in a plain checkout).",
		Flags:  simFlags(),
		Action: simAction,
	}
}

func simFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "policies", Value: strings.Join(sim.PolicyNames(), ","),
			Usage: "comma-separated `LIST` of policies to compare"},
		&cli.IntFlag{Name: "seeds", Value: 20, Usage: "number of seeds (worlds) per policy"},
		&cli.Uint64Flag{Name: "seed-base", Value: 1, Usage: "the first seed; seeds are seed-base, seed-base+1, …"},
		&cli.IntFlag{Name: "steps", Value: 120, Usage: "training steps per run"},
		&cli.IntFlag{Name: "batch-size", Value: 64, Usage: "tasks per step (B)"},
		&cli.IntFlag{Name: "group-size", Value: 8, Usage: "rollouts per task (G)"},
		&cli.StringFlag{Name: "scenario", Value: "default", Usage: "world `NAME`: " + strings.Join(sim.ScenarioNames(), ", ") + ", real-catalog"},
		&cli.StringFlag{Name: "real-catalog", Value: sim.DefaultRealCatalog,
			Usage: "`FILE` of real agent tasks (JSON lines: env, task_id, text, tools) for --scenario real-catalog"},
		&cli.StringFlag{Name: "out", Value: "sim-out", Usage: "`DIR` for the PNG plots (empty: no plots)"},
		&cli.IntFlag{Name: "workers", Value: 0, Usage: "parallel runs (0: one per CPU)"},
		&cli.StringFlag{Name: "json-out", Usage: "also write the JSON summary and curves to `FILE`"},
		&cli.BoolFlag{Name: "json", Usage: "print the summary and per-step curves as JSON instead of a table"},
	}
}

// simConfig reads the flags into a validated sim.Config.
func simConfig(c *cli.Context) (sim.Config, error) {
	sc, err := sim.ScenarioFor(c.String("scenario"), c.String("real-catalog"))
	if err != nil {
		return sim.Config{}, err
	}
	cfg := sim.DefaultConfig()
	cfg.Scenario = sc
	cfg.Policies = splitList(c.String("policies"))
	cfg.Seeds, cfg.SeedBase, cfg.Steps = c.Int("seeds"), c.Uint64("seed-base"), c.Int("steps")
	cfg.BatchSize, cfg.GroupSize, cfg.Workers = c.Int("batch-size"), c.Int("group-size"), c.Int("workers")
	return cfg, cfg.Validate()
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func simAction(c *cli.Context) error {
	cfg, err := simConfig(c)
	if err != nil {
		return usageError{err}
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := runSim(ctx, cfg, c.App.ErrWriter)
	if err != nil {
		return err
	}
	if out := c.String("out"); out != "" {
		paths, err := sim.WritePlots(out, res)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.App.ErrWriter, "plots: %s\n", strings.Join(paths, ", "))
	}
	if path := c.String("json-out"); path != "" {
		if err := writeJSONFile(path, res); err != nil {
			return err
		}
	}
	if c.Bool("json") {
		return sim.WriteJSON(c.App.Writer, res)
	}
	return sim.WriteTable(c.App.Writer, res)
}

// runSim runs the comparison with a progress bar on stderr when it is a terminal.
func runSim(ctx context.Context, cfg sim.Config, stderr io.Writer) (sim.Result, error) {
	total := cfg.Seeds * len(cfg.Policies)
	bar := progress(stderr, total,
		progressbar.OptionSetDescription(fmt.Sprintf("sim %s", cfg.Scenario.Name)),
		progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(200_000_000), progressbar.OptionOnCompletion(func() { fmt.Fprintln(stderr) }))
	cfg.Progress = func(done, _ int) { bar(done) }
	if !terminal(stderr) {
		cfg.SeedDone = seedLines(stderr, cfg.Scenario.Name, time.Now)
	}
	res, err := sim.Run(ctx, cfg)
	if err != nil {
		return res, fmt.Errorf("sim: %w", err)
	}
	return res, nil
}

// seedLines returns a sim.Config.SeedDone that prints one line per finished seed to w, with the
// time so far and an estimate of the time left: the progress of a run without a terminal (in a
// log, under nohup, in CI), where no bar is drawn.
func seedLines(w io.Writer, scenario string, now func() time.Time) func(seed uint64, done, total int) {
	start := now()
	return func(seed uint64, done, total int) {
		elapsed := now().Sub(start)
		left := time.Duration(float64(elapsed) / float64(done) * float64(total-done))
		fmt.Fprintf(w, "sim %s: seed %d done (%d/%d seeds) in %s, about %s left\n",
			scenario, seed, done, total, elapsed.Round(time.Second), left.Round(time.Second))
	}
}

func writeJSONFile(path string, res sim.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("json out: %w", err)
	}
	if err := sim.WriteJSON(f, res); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("json out %s: %w", path, err)
	}
	return nil
}
