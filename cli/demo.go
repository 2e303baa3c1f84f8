package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"

	"github.com/envsched/envsched/daemon"
	"github.com/envsched/envsched/schedule"
	"github.com/envsched/envsched/sim"
)

// demoSeed is the world of the demo: the default scenario, seed 1 (a reported seed).
const demoSeed = 1

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "run the real daemon against a simulated trainer and compare with random choice",
		Description: "demo writes a simulated catalogue of about 20 environments into DIR/catalog, starts " +
			"the envsched daemon on DIR, and plays a GRPO trainer through the file protocol alone: each " +
			"step it writes DIR/requests/step-000001.json (then step-000002.json, ...), waits for the " +
			"batch of the same name in DIR/batches, rolls the batch out on a simulated agent and appends the rewards to DIR/rollouts/trainer.jsonl. Then it " +
			"trains the same simulated agent with random task choice and prints both side by side.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "steps", Value: 120, Usage: "training steps of each run"},
			&cli.StringFlag{Name: "out", Usage: "exchange `DIR` to use and keep, new or empty (default: a temporary one)"},
			&cli.BoolFlag{Name: "keep", Usage: "keep the temporary exchange directory and print its path"},
		},
		Action: demoAction,
	}
}

func demoAction(c *cli.Context) error {
	steps := c.Int("steps")
	if steps < 1 || steps > sim.MaxSteps {
		return usageError{fmt.Errorf("--steps %d: must be 1 to %d", steps, sim.MaxSteps)}
	}
	dir, cleanup, err := demoDir(c.String("out"), c.Bool("keep"))
	if err != nil {
		return err
	}
	defer cleanup()
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	es, random, err := runDemo(ctx, dir, steps, c.App.ErrWriter)
	if err != nil {
		return err
	}
	if err := sim.WriteDemoTable(c.App.Writer, es.Trace, random, es.Policy); err != nil {
		return err
	}
	if c.String("out") != "" || c.Bool("keep") {
		fmt.Fprintf(c.App.Writer, "exchange directory kept: %s (%d batch files)\n", dir, es.Batches)
	}
	return nil
}

// demoDir is --out (made if needed, always kept) or a new temporary directory, removed at
// the end unless keep. --out must be new or empty: the demo writes a simulated catalogue,
// requests and rollouts into it, and a real exchange directory given by mistake took them
// in (a daemon serving it chose the simulated tasks for its trainer's batches).
func demoDir(out string, keep bool) (string, func(), error) {
	if out != "" {
		if err := emptyOrNew(out); err != nil {
			return "", nil, err
		}
		if err := os.MkdirAll(out, 0o755); err != nil {
			return "", nil, fmt.Errorf("demo dir: %w", err)
		}
		return out, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "envsched-demo-")
	if err != nil {
		return "", nil, fmt.Errorf("demo dir: %w", err)
	}
	if keep {
		return dir, func() {}, nil
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// emptyOrNew refuses a --out that exists and holds anything (a usage error).
func emptyOrNew(out string) error {
	entries, err := os.ReadDir(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil && !errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("demo dir: %w", err)
	case err != nil:
		return usageError{fmt.Errorf("--out %s: not a folder; give a new or empty folder", out)}
	case len(entries) > 0:
		return usageError{fmt.Errorf("--out %s: not empty (it holds %s): the demo writes a simulated catalogue, "+
			"requests and rollouts into it, which would mix with what is there (an exchange directory's tasks, "+
			"rollouts and answers); give a new or empty folder", out, entries[0].Name())}
	}
	return nil
}

// runDemo serves dir with the real daemon while the simulated trainer drives it, then trains
// the same world with random choice.
func runDemo(ctx context.Context, dir string, steps int, stderr io.Writer) (sim.ExchangeResult, sim.Trace, error) {
	w := sim.NewWorld(sim.DefaultScenario(), demoSeed)
	if _, err := sim.WriteCatalog(dir, w); err != nil {
		return sim.ExchangeResult{}, sim.Trace{}, err
	}
	es, err := driveDaemon(ctx, dir, steps, w, stderr)
	if err != nil {
		return es, sim.Trace{}, err
	}
	cfg := sim.DefaultConfig()
	cfg.Steps = steps
	random, err := sim.RunOne(ctx, cfg, w, "random")
	return es, random, err
}

// driveDaemon runs the daemon in process on dir (its log goes to DIR/envsched.log) for as
// long as the trainer needs it, with a progress bar on stderr when it is a terminal.
func driveDaemon(ctx context.Context, dir string, steps int, w *sim.World, stderr io.Writer) (sim.ExchangeResult, error) {
	logf, err := os.Create(filepath.Join(dir, "envsched.log"))
	if err != nil {
		return sim.ExchangeResult{}, fmt.Errorf("demo log: %w", err)
	}
	defer logf.Close()
	d, err := daemon.New(daemon.Config{Dir: dir, Version: version}, slog.New(slog.NewTextHandler(logf, nil)))
	if err != nil {
		return sim.ExchangeResult{}, fmt.Errorf("start envsched: %w", err)
	}
	defer d.Close()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- d.Run(runCtx); cancel() }()
	bar := progress(stderr, steps,
		progressbar.OptionSetDescription("envsched demo: trainer ↔ daemon"), progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(100_000_000),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(stderr) }))
	res, err := sim.DriveExchange(runCtx, sim.ExchangeConfig{
		Dir: dir, Steps: steps, BatchSize: schedule.DefaultSize, GroupSize: schedule.DefaultGroupSize,
		Progress: func(step int, _ float64) { bar(step) },
	}, w)
	cancel()
	if derr := <-done; derr != nil && !errors.Is(derr, context.Canceled) {
		return res, fmt.Errorf("envsched daemon: %w", derr)
	}
	return res, err
}
