package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"

	"github.com/envsched/envsched/ingest"
	"github.com/envsched/envsched/schedule"
	"github.com/envsched/envsched/storage"
)

// progressMinBytes is the backlog above which `ingest` shows a progress bar (on a terminal).
const progressMinBytes = 64 << 20

func ingestCommand() *cli.Command {
	return &cli.Command{
		Name:  "ingest",
		Usage: "read everything new under DIR/catalog and DIR/rollouts into the database",
		Description: "ingest reads every complete line that is new in DIR/catalog/*.jsonl and " +
			"DIR/rollouts/**/*.jsonl (and a catalogue's last row that lacks its newline), and every changed " +
			"DIR/catalog/*.parquet, commits it, and prints a " +
			"one-line summary. Run again with nothing new, it adds nothing. It cannot run while `envsched run` holds the database (exit code 3).",
		Flags: []cli.Flag{
			ingestDirFlag(),
			ingestDBFlag(),
			&cli.Float64Flag{Name: "reward-min", EnvVars: []string{"ENVSCHED_REWARD_MIN"}, Value: 0,
				Usage: "lowest reward; lower rewards are clipped to it and counted (fixed when the database is created)"},
			&cli.Float64Flag{Name: "reward-max", EnvVars: []string{"ENVSCHED_REWARD_MAX"}, Value: 1,
				Usage: "highest reward; higher rewards are clipped to it and counted (fixed when the database is created)"},
		},
		Action: ingestAction,
	}
}

// ingestRewardRange is the range asked for on the command line; nil when neither flag was given, so
// that an existing database keeps its own.
func ingestRewardRange(c *cli.Context) (*storage.Range, error) {
	if !c.IsSet("reward-min") && !c.IsSet("reward-max") {
		return nil, nil
	}
	r := &storage.Range{Min: c.Float64("reward-min"), Max: c.Float64("reward-max")}
	if r.Check() != nil {
		return nil, usageError{fmt.Errorf("--reward-min %g must be below --reward-max %g, both finite and max − min finite", r.Min, r.Max)}
	}
	return r, nil
}

func ingestAction(c *cli.Context) error {
	dir := c.String("dir")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usageError{fmt.Errorf("--dir %s: not a folder", dir)}
	}
	if err := checkInputFolders(dir); err != nil {
		return usageError{err}
	}
	rg, err := ingestRewardRange(c)
	if err != nil {
		return err
	}
	if err := checkDBPlace(dir, c.String("db")); err != nil {
		return usageError{err}
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	db, err := storage.Open(ingestDBPath(c), storage.Options{Reward: rg, Logger: log, ExchangeDir: dir})
	if errors.Is(err, storage.ErrLocked) {
		return fmt.Errorf("%w: if it is `envsched run`, it ingests every new line itself and there is nothing "+
			"to run ingest for (`envsched stats --dir DIR` shows what it holds); else stop that process first", err)
	}
	if err != nil {
		return err
	}
	defer db.Close()
	bar := newIngestBar(os.Stderr)
	in, err := schedule.NewOneShotIngester(db, dir, ingest.Options{Logger: log, Progress: testProgress(log, bar.update)})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context, stopSignals()...)
	defer stop()
	sum, err := in.Scan(ctx)
	bar.finish()
	if err != nil {
		return interrupted(ctx, err, sum, "run `envsched ingest` again to read the rest")
	}
	fmt.Fprintln(c.App.Writer, sum.String())
	return db.Close()
}

// interrupted turns a scan cut short by SIGINT, SIGTERM or SIGHUP into a clear error (exit code
// 1): the scan stopped at a commit boundary, what it committed stays, and a new run goes on from
// there, counting nothing twice. Other errors are returned as they are.
func interrupted(ctx context.Context, err error, sum ingest.Summary, again string) error {
	if ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
		return err
	}
	return fmt.Errorf("interrupted by a signal: stopped after a commit, keeping what was committed (%s); %s "+
		"(nothing is counted twice)", sum, again)
}

// testProgress adds to a scan's progress callback, when ENVSCHED_TEST_PROGRESS is set (the
// interrupt test), a log line after every commit, so that a test can signal the process mid-scan.
func testProgress(log *slog.Logger, f func(ingest.Progress)) func(ingest.Progress) {
	if os.Getenv(envProgress) == "" {
		return f
	}
	return func(p ingest.Progress) {
		f(p)
		log.Warn("ingest progress", "lines", p.Lines, "mb", p.Done>>20)
	}
}

// ingestBar shows a progress bar on a terminal when the backlog is large; elsewhere it does
// nothing.
type ingestBar struct {
	w   io.Writer
	tty bool
	bar *progressbar.ProgressBar
}

func newIngestBar(f *os.File) *ingestBar {
	return &ingestBar{w: f, tty: terminal(f)}
}

func (b *ingestBar) update(p ingest.Progress) {
	if !b.tty || p.Total < progressMinBytes {
		return
	}
	if b.bar == nil {
		b.bar = progressbar.NewOptions64(p.Total, progressbar.OptionSetWriter(b.w),
			progressbar.OptionShowBytes(true), progressbar.OptionSetDescription("ingesting"),
			progressbar.OptionThrottle(100e6), progressbar.OptionClearOnFinish())
	}
	if err := b.bar.Set64(min(p.Done, p.Total)); err != nil && !errors.Is(err, io.ErrShortWrite) {
		b.tty = false // the terminal went away: stop drawing
	}
}

func (b *ingestBar) finish() {
	if b.bar != nil {
		_ = b.bar.Finish()
	}
}
