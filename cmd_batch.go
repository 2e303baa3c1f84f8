package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/envsched/envsched/batcher"
	"github.com/envsched/envsched/catalog"
	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/ingest"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/schedule"
	"github.com/envsched/envsched/storage"
)

func batchCommand() *cli.Command {
	flags := []cli.Flag{
		ingestDirFlag(),
		ingestDBFlag(),
		&cli.IntFlag{Name: "size", EnvVars: []string{"ENVSCHED_BATCH_SIZE"}, Value: schedule.DefaultSize,
			Usage: "tasks in the batch (1 to 100000)"},
		&cli.IntFlag{Name: "group-size", EnvVars: []string{"ENVSCHED_GROUP_SIZE"}, Value: schedule.DefaultGroupSize,
			Usage: "rollouts the trainer runs per task (1 to 1024); sets the degenerate chance shown"},
		&cli.StringFlag{Name: "id", Usage: "the request `ID` to store the batch under (default batch-STEP)"},
		&cli.Int64Flag{Name: "step", Usage: "the training step the batch is for (default: the previous answered step + 1)"},
		&cli.StringSliceFlag{Name: "env", Usage: "only this environment (repeat for several)"},
		&cli.StringSliceFlag{Name: "exclude-env", Usage: "never this environment (repeat for several)"},
		&cli.BoolFlag{Name: "allow-repeats", Usage: "repeat tasks when fewer are eligible than --size"},
		&cli.Int64Flag{Name: "seed", Usage: "seed of every random choice (default: derived from the ID)"},
		&cli.BoolFlag{Name: "json", Usage: "print the batch object of PROTOCOL.md instead of a table"},
	}
	return &cli.Command{
		Name:  "batch",
		Usage: "choose a batch now, as the daemon would answer a request",
		Description: "batch ingests what is new under DIR/catalog and DIR/rollouts, chooses a batch exactly as " +
			"`envsched run` answers a request file, stores it in the database under the ID and prints it. " +
			"The same ID again prints the stored batch unchanged. It cannot run while `envsched run` holds " +
			"the database (exit code 3).",
		Flags:  append(flags, schedulerFlags()...),
		Action: batchAction,
	}
}

// schedulerFlags are the parameters of prediction and selection, shared by every command that
// chooses batches.
func schedulerFlags() []cli.Flag {
	pp, bp := propagate.DefaultParams(), batcher.DefaultParams()
	return []cli.Flag{
		&cli.Float64Flag{Name: "kappa", EnvVars: []string{"ENVSCHED_KAPPA"}, Value: pp.Kappa,
			Usage: "strength, in rollouts, of the prior that serves tasks never rolled out"},
		&cli.Float64Flag{Name: "feature-ridge", EnvVars: []string{"ENVSCHED_FEATURE_RIDGE"}, Value: pp.FeatureRidge,
			Usage: "ridge penalty of the feature prior, which learns from the words and tools of tasks rolled out what tasks never rolled out will do (0 = environment means instead)"},
		&cli.Float64Flag{Name: "gamma", EnvVars: []string{"ENVSCHED_GAMMA"}, Value: pp.Gamma,
			Usage: "share of its graph neighbours' evidence a task borrows per hop (0 turns the graph off)"},
		&cli.IntFlag{Name: "hops", EnvVars: []string{"ENVSCHED_HOPS"}, Value: pp.Hops,
			Usage: "how far evidence travels along the graph: 0, 1 or 2 edges"},
		&cli.Float64Flag{Name: "borrow-cap", EnvVars: []string{"ENVSCHED_BORROW_CAP"}, Value: pp.BorrowCap,
			Usage: "most evidence, in rollouts, a task may borrow from its neighbours"},
		&cli.Float64Flag{Name: "drift-rate", EnvVars: []string{"ENVSCHED_DRIFT_RATE"}, Value: pp.DriftRate,
			Usage: "how fast an environment's stale predictions follow rewards that run away from them (0 = off)"},
		&cli.Float64Flag{Name: "rechosen-rate", EnvVars: []string{"ENVSCHED_RECHOSEN_RATE"}, Value: pp.RechosenRate,
			Usage: "how fast the predictions of tasks rolled out before follow what such tasks do when chosen again (0 = off)"},
		&cli.StringFlag{Name: "exploit", EnvVars: []string{"ENVSCHED_EXPLOIT"}, Value: bp.Exploit.String(),
			Usage: "exploitation value: variance (4 × predicted within-group variance) or informative (1 − chance of a degenerate group)"},
		&cli.Float64Flag{Name: "coverage-weight", EnvVars: []string{"ENVSCHED_COVERAGE_WEIGHT"}, Value: bp.CoverageWeight,
			Usage: "weight of the coverage value (uncertainty, staleness, novelty) against exploitation"},
		&cli.Float64Flag{Name: "sim-penalty", EnvVars: []string{"ENVSCHED_SIM_PENALTY"}, Value: bp.SimPenalty,
			Usage: "penalty per unit of similarity to a task already in the batch (0 allows near-duplicates)"},
		&cli.Float64Flag{Name: "random-share", EnvVars: []string{"ENVSCHED_RANDOM_SHARE"}, Value: bp.RandomShare,
			Usage: "share of the batch drawn uniformly at random from the eligible tasks"},
		&cli.Float64Flag{Name: "quota-smoothing", EnvVars: []string{"ENVSCHED_QUOTA_SMOOTHING"}, Value: bp.QuotaSmoothing,
			Usage: "weight of the uniform share in each environment's quota (1 = equal quotas)"},
		&cli.Float64Flag{Name: "min-share", EnvVars: []string{"ENVSCHED_MIN_SHARE"}, Value: bp.MinShare,
			Usage: "least quota of an environment, as a fraction of the uniform share"},
		&cli.Float64Flag{Name: "max-share", EnvVars: []string{"ENVSCHED_MAX_SHARE"}, Value: bp.MaxShare,
			Usage: "largest quota of an environment, as a fraction of the batch"},
		&cli.Float64Flag{Name: "stale-rounds", EnvVars: []string{"ENVSCHED_STALE_ROUNDS"}, Value: bp.StaleRounds,
			Usage: "steps after which a task not chosen counts as mostly stale (the time constant of staleness)"},
	}
}

// schedulerParams reads the flags of schedulerFlags; decay is the database's.
func schedulerParams(c *cli.Context, decay float64) (propagate.Params, batcher.Params, error) {
	pp, bp := propagate.DefaultParams(), batcher.DefaultParams()
	pp.Decay, pp.Kappa, pp.Gamma, pp.Hops = decay, c.Float64("kappa"), c.Float64("gamma"), c.Int("hops")
	pp.BorrowCap, pp.DriftRate = c.Float64("borrow-cap"), c.Float64("drift-rate")
	pp.FeatureRidge, pp.RechosenRate = c.Float64("feature-ridge"), c.Float64("rechosen-rate")
	exploit, err := batcher.ParseExploit(c.String("exploit"))
	if err != nil {
		return pp, bp, usageError{fmt.Errorf("--exploit: %w", err)}
	}
	bp.Exploit, bp.CoverageWeight, bp.SimPenalty = exploit, c.Float64("coverage-weight"), c.Float64("sim-penalty")
	bp.RandomShare, bp.QuotaSmoothing = c.Float64("random-share"), c.Float64("quota-smoothing")
	bp.MinShare, bp.MaxShare, bp.StaleRounds = c.Float64("min-share"), c.Float64("max-share"), c.Float64("stale-rounds")
	if err := pp.Validate(); err != nil {
		return pp, bp, usageError{err}
	}
	if err := bp.Validate(); err != nil {
		return pp, bp, usageError{err}
	}
	return pp, bp, nil
}

func batchAction(c *cli.Context) error {
	dir := c.String("dir")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usageError{fmt.Errorf("--dir %s: not a folder", dir)}
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	db, err := storage.Open(ingestDBPath(c), storage.Options{Logger: log})
	if err != nil {
		return err
	}
	defer db.Close()
	if err := ingestNew(c, db, dir, log); err != nil {
		return err
	}
	sch, err := newBatchScheduler(c, db, log)
	if err != nil {
		return err
	}
	id, err := batchID(c, db)
	if err != nil {
		return err
	}
	data, err := sch.Answer(id, batchBody(c))
	if err != nil {
		return err
	}
	if err := printBatch(c.App.Writer, data, c.Bool("json")); err != nil {
		return err
	}
	return db.Close()
}

// ingestNew reads what is new in DIR, as the daemon does before it answers, and says what on
// standard error.
func ingestNew(c *cli.Context, db *storage.DB, dir string, log *slog.Logger) error {
	edges := schedule.NewEdgeKeeper(graph.Options{})
	in, err := ingest.New(db, dir, ingest.Options{Logger: log, ReadCatalogFile: catalog.ReadFile,
		OnTasks: edges.OnTasks, OnCommitError: edges.Reset})
	if err != nil {
		return err
	}
	sum, err := in.Scan(c.Context)
	if err != nil {
		return err
	}
	fmt.Fprintln(c.App.ErrWriter, sum.String())
	return nil
}

func newBatchScheduler(c *cli.Context, db *storage.DB, log *slog.Logger) (*schedule.Scheduler, error) {
	pp, bp, err := schedulerParams(c, db.Config().Decay)
	if err != nil {
		return nil, err
	}
	size, group := c.Int("size"), c.Int("group-size")
	if size < 1 || size > schedule.MaxSize || group < 1 || group > schedule.MaxGroupSize {
		return nil, usageError{fmt.Errorf("--size %d and --group-size %d: want 1 to %d and 1 to %d", size, group, schedule.MaxSize, schedule.MaxGroupSize)}
	}
	return schedule.New(db, schedule.Options{Size: size, GroupSize: group, Predict: &pp, Select: &bp,
		BuildGraph: schedule.DefaultBuildGraph, Logger: log})
}

// batchID is --id, or batch-STEP with STEP the step the batch will be for.
func batchID(c *cli.Context, db *storage.DB) (string, error) {
	if id := c.String("id"); id != "" {
		if !schedule.ValidID(id) {
			return "", usageError{fmt.Errorf("--id %q: want 1 to 128 of A-Z a-z 0-9 . _ -, starting with a letter or digit", id)}
		}
		return id, nil
	}
	step := c.Int64("step")
	if !c.IsSet("step") {
		last, err := schedule.LastStep(db)
		if err != nil {
			return "", err
		}
		step = last + 1
	}
	return fmt.Sprintf("batch-%d", step), nil
}

// batchBody is the request the flags make, in the file format a trainer would write.
func batchBody(c *cli.Context) []byte {
	req := map[string]any{"size": c.Int("size"), "group_size": c.Int("group-size")}
	if c.IsSet("step") {
		req["step"] = c.Int64("step")
	}
	if envs := c.StringSlice("env"); len(envs) > 0 {
		req["envs"] = envs
	}
	if envs := c.StringSlice("exclude-env"); len(envs) > 0 {
		req["exclude_envs"] = envs
	}
	if c.Bool("allow-repeats") {
		req["allow_repeats"] = true
	}
	if c.IsSet("seed") {
		req["seed"] = c.Int64("seed")
	}
	data, _ := json.Marshal(req)
	return data
}

// printBatch prints the stored answer: as it is with asJSON, else as a table.
func printBatch(w io.Writer, data []byte, asJSON bool) error {
	if asJSON {
		_, err := w.Write(data)
		return err
	}
	var a schedule.Answer
	if err := json.Unmarshal(data, &a); err != nil {
		return errors.New("the stored answer is not a batch object: " + err.Error())
	}
	fmt.Fprintf(w, "batch %s  step %d  %d tasks × %d rollouts  from %d eligible  (%d rollouts seen, %s)\n",
		a.ID, a.Step, a.Size, a.GroupSize, a.Eligible, a.RolloutsSeen, a.CreatedAt)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "rank\tenv\ttask\tscore\tmean\tvariance\tp(degenerate)\texploit\tcoverage\tpenalty\treason")
	for _, t := range a.Tasks {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.3f\t%.2f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\n", t.Rank, t.Env, t.TaskID,
			t.Score, t.PredictedMean, t.PredictedVariance, t.PDegenerate, t.Exploit, t.Coverage, t.Penalty, t.Reason)
	}
	return tw.Flush()
}
