package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/envsched/envsched/ingest"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/schedule"
	"github.com/envsched/envsched/storage"
)

func batchCommand() *cli.Command {
	flags := []cli.Flag{
		ingestDirFlag(),
		ingestDBFlag(),
		&cli.IntFlag{Name: "size", EnvVars: []string{"ENVSCHED_BATCH_SIZE"}, Value: schedule.DefaultSize,
			Usage: fmt.Sprintf("tasks in the batch (1 to %d)", schedule.MaxSize)},
		&cli.IntFlag{Name: "group-size", EnvVars: []string{"ENVSCHED_GROUP_SIZE"}, Value: schedule.DefaultGroupSize,
			Usage: fmt.Sprintf("rollouts the trainer runs per task (1 to %d); sets the degenerate chance shown", schedule.MaxGroupSize)},
		&cli.StringFlag{Name: "id", Usage: "the request `ID` to store the batch under (default batch-STEP)"},
		&cli.Int64Flag{Name: "step", Usage: "the training step the batch is for", DefaultText: "the previous answered step + 1"},
		&cli.StringSliceFlag{Name: "env", Usage: "only this environment (repeat for several)"},
		&cli.StringSliceFlag{Name: "exclude-env", Usage: "never this environment (repeat for several)"},
		&cli.BoolFlag{Name: "allow-repeats", Usage: "repeat tasks when fewer are eligible than --size"},
		&cli.StringFlag{Name: "seed", Usage: "seed of every random choice: an integer of 64 bits, signed or not, as a request's seed", DefaultText: "derived from the ID"},
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

func batchAction(c *cli.Context) error {
	dir := c.String("dir")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usageError{fmt.Errorf("--dir %s: not a folder", dir)}
	}
	if err := checkInputFolders(dir); err != nil {
		return usageError{err}
	}
	if err := checkDBPlace(dir, c.String("db")); err != nil {
		return usageError{err}
	}
	// Every flag is checked before the database is opened: a bad one exits 2 having created,
	// ingested and stored nothing (it was found after the ingest, in a database made for it).
	p, err := batchParams(c)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	db, err := storage.Open(ingestDBPath(c), storage.Options{Logger: log, ExchangeDir: dir})
	if errors.Is(err, storage.ErrLocked) {
		return fmt.Errorf("%w: if it is `envsched run`, ask it for a batch by writing DIR/requests/ID.json "+
			"(PROTOCOL.md, section 5), or stop it to run batch", err)
	}
	if err != nil {
		return err
	}
	defer db.Close()
	if err := ingestNew(c, db, dir, log); err != nil {
		return err
	}
	sch, err := schedule.Configured(db, p, c.Int("size"), c.Int("group-size"), log)
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
	warnStored(c, id, data)
	warnExcludedUnknown(c, sch)
	if err := printBatch(c.App.Writer, data, c.Bool("json")); err != nil {
		return err
	}
	return db.Close()
}

// warnExcludedUnknown says on standard error which --exclude-env names are no environment (they
// exclude nothing, as in a request), with the environment each is likely a typo of.
func warnExcludedUnknown(c *cli.Context, sch *schedule.Scheduler) {
	names := c.StringSlice("exclude-env")
	if len(names) == 0 {
		return
	}
	unknown, err := sch.UnknownEnvs(names)
	if err != nil {
		return
	}
	for _, n := range names {
		near, ok := unknown[n]
		if !ok {
			continue
		}
		mean := ""
		if near != "" {
			mean = fmt.Sprintf(" (did you mean %s?)", cell(near))
		}
		fmt.Fprintf(c.App.ErrWriter, "envsched: --exclude-env %s is no environment envsched knows, so it excludes nothing%s\n",
			cell(n), mean)
		delete(unknown, n) // a name given twice is said once
	}
}

// ingestNew reads what is new in DIR, as the daemon does before it answers, and says what on
// standard error.
func ingestNew(c *cli.Context, db *storage.DB, dir string, log *slog.Logger) error {
	in, err := schedule.NewOneShotIngester(db, dir, ingest.Options{Logger: log})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context, stopSignals()...)
	defer stop() // the answer that follows is one transaction: a signal then ends the process
	sum, err := in.Scan(ctx)
	if err != nil {
		return interrupted(ctx, err, sum, "no batch was chosen; run `envsched batch` again")
	}
	fmt.Fprintln(c.App.ErrWriter, sum.String())
	return nil
}

// batchParams checks the flags of batch that need no database: the scheduling parameters,
// --size, --group-size, --step and --id.
func batchParams(c *cli.Context) (schedule.Params, error) {
	p, err := schedulerParams(c)
	if err != nil {
		return p, err
	}
	size, group := c.Int("size"), c.Int("group-size")
	if !schedule.ValidSize(size) || !schedule.ValidGroupSize(group) {
		return p, usageError{fmt.Errorf("--size %d and --group-size %d: want 1 to %d and 1 to %d", size, group, schedule.MaxSize, schedule.MaxGroupSize)}
	}
	if step := c.Int64("step"); c.IsSet("step") && (step < 0 || step > record.MaxStep) {
		return p, usageError{fmt.Errorf("--step %d: want 0 to %d", step, record.MaxStep)}
	}
	if id := c.String("id"); id != "" && !schedule.ValidID(id) {
		return p, usageError{fmt.Errorf("--id %q: want %s", id, schedule.IDRule)}
	}
	if seed := c.String("seed"); c.IsSet("seed") && !validSeed(seed) {
		return p, usageError{fmt.Errorf("--seed %q: want an integer of 64 bits, signed (down to -2^63) or not (up to 2^64-1)", seed)}
	}
	for _, flag := range []string{"env", "exclude-env"} {
		if slices.Contains(c.StringSlice(flag), "") {
			return p, usageError{fmt.Errorf("--%s \"\": an environment name cannot be empty", flag)}
		}
	}
	// whatever else the request the flags make would be refused for, before the database
	if _, err := schedule.ParseRequest(batchBody(c), size, group); err != nil {
		return p, usageError{fmt.Errorf("the flags' request: %w", err)}
	}
	return p, nil
}

// validSeed says whether s is a decimal integer a request's seed takes (any 64-bit value, signed
// or not): a signed flag could not give the seeds from 2^63 on that requests allow.
func validSeed(s string) bool {
	_, ok := seedLiteral(s)
	return ok
}

// seedLiteral is s as the JSON integer literal a request's seed is written as ("+7" and "007"
// are 7: JSON has no sign or leading zeros), and whether s is a 64-bit integer at all.
func seedLiteral(s string) (json.Number, bool) {
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return json.Number(strconv.FormatUint(u, 10)), true
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return json.Number(strconv.FormatInt(i, 10)), true
	}
	return "", false
}

// batchID is --id, or batch-STEP with STEP the step the batch will be for.
func batchID(c *cli.Context, db *storage.DB) (string, error) {
	if id := c.String("id"); id != "" { // checked by batchParams
		return id, nil
	}
	step := c.Int64("step")
	if !c.IsSet("step") {
		last, err := schedule.LastStep(db)
		if err != nil {
			return "", err
		}
		step = schedule.NextStep(last, nil)
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
		req["seed"], _ = seedLiteral(c.String("seed")) // checked by batchParams: validSeed
	}
	data, err := json.Marshal(req)
	if err != nil { // every value is checked by batchParams first: a body lost here is a bug
		panic(fmt.Sprintf("batch: the flags' request does not encode: %v", err))
	}
	return data
}

// warnStored says on standard error when the answer stored under id has another size, group
// size or step than the flags ask for: the same ID always gets the same answer, so `batch --id
// X --size 5` after X was answered with 2 tasks printed the 2 tasks without a word (the daemon
// logs such a request at WARN). A new answer always agrees with the flags.
func warnStored(c *cli.Context, id string, answer []byte) {
	var a struct {
		Step      int64 `json:"step"`
		Size      int   `json:"size"`
		GroupSize int   `json:"group_size"`
	}
	if json.Unmarshal(answer, &a) != nil {
		return
	}
	size, group := c.Int("size"), c.Int("group-size")
	if a.Size == size && a.GroupSize == group && (!c.IsSet("step") || a.Step == c.Int64("step")) {
		return
	}
	asked := fmt.Sprintf("size %d, group size %d", size, group)
	if c.IsSet("step") {
		asked += fmt.Sprintf(", step %d", c.Int64("step"))
	}
	fmt.Fprintf(c.App.ErrWriter, "envsched: batch %s was chosen before with size %d, group size %d, step %d, "+
		"and is printed as stored (the same ID always gets the same answer), not with the %s asked; "+
		"give a new --id for a new batch\n", id, a.Size, a.GroupSize, a.Step, asked)
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
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.3f\t%.2f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\n", t.Rank, cell(t.Env), cell(t.TaskID),
			t.Score, t.PredictedMean, t.PredictedVariance, t.PDegenerate, t.Exploit, t.Coverage, t.Penalty, t.Reason)
	}
	return tw.Flush()
}
