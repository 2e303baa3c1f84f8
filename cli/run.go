package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/envsched/envsched/daemon"
	"github.com/envsched/envsched/metrics"
	"github.com/envsched/envsched/schedule"
)

// Test-only knobs of `envsched run`, read from the environment and deliberately not flags.
const (
	envCrashPoint    = "ENVSCHED_CRASHPOINT"          // name[:n]: die at the n-th pass of a named point
	envOverflowEvery = "ENVSCHED_TEST_OVERFLOW_EVERY" // n: every n-th watcher event is a simulated overflow
	envProgress      = "ENVSCHED_TEST_PROGRESS"       // duration: how often a long ingest pass logs its progress
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "serve an exchange directory: ingest rollouts, answer batch requests",
		Description: "run creates DIR's folders, ingests the rollouts and catalogue already there, answers " +
			"the requests already there, then watches DIR until SIGINT, SIGTERM or SIGHUP, answering each " +
			"DIR/requests/ID.json with DIR/batches/ID.json. Exit codes: 0 stopped by a signal, 1 an " +
			"error, 2 bad flags, 3 the database or DIR is locked by another process.",
		Flags:  append(runFlags(), schedulerFlags()...),
		Action: runAction,
	}
}

func runFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "dir", EnvVars: []string{"ENVSCHED_DIR"},
			Usage: "the exchange `DIR` the trainer writes catalog/, rollouts/ and requests/ into"},
		&cli.StringFlag{Name: "db", EnvVars: []string{"ENVSCHED_DB"},
			Usage: "the database `PATH` (default DIR/envsched.db)"},
		&cli.BoolFlag{Name: "poll", EnvVars: []string{"ENVSCHED_POLL"},
			Usage: "find changes by polling alone (for NFS and other filesystems without events)"},
		&cli.DurationFlag{Name: "poll-interval", EnvVars: []string{"ENVSCHED_POLL_INTERVAL"},
			Value: daemon.DefaultPollInterval, Usage: "how often the folders are listed in poll mode (at least 1ms)"},
		&cli.DurationFlag{Name: "rescan-interval", EnvVars: []string{"ENVSCHED_RESCAN_INTERVAL"},
			Value: daemon.DefaultSafetyInterval,
			Usage: "with file events, how often the folders are also listed, a net under lost events (at least 1ms)"},
		&cli.DurationFlag{Name: "status-interval", EnvVars: []string{"ENVSCHED_STATUS_INTERVAL"},
			Value: daemon.DefaultStatusInterval, Usage: "how often DIR/status.json is rewritten (at least 1ms)"},
		&cli.IntFlag{Name: "batch-size", EnvVars: []string{"ENVSCHED_BATCH_SIZE"},
			Value: schedule.DefaultSize, Usage: fmt.Sprintf("tasks in a batch when a request gives no size (1 to %d)", schedule.MaxSize)},
		&cli.IntFlag{Name: "group-size", EnvVars: []string{"ENVSCHED_GROUP_SIZE"},
			Value: schedule.DefaultGroupSize, Usage: fmt.Sprintf("rollouts per task when a request gives no group_size (1 to %d)", schedule.MaxGroupSize)},
		&cli.Float64Flag{Name: "reward-min", EnvVars: []string{"ENVSCHED_REWARD_MIN"}, Value: 0,
			Usage: "lowest reward; lower rewards are clipped to it and counted (fixed when the database is created)"},
		&cli.Float64Flag{Name: "reward-max", EnvVars: []string{"ENVSCHED_REWARD_MAX"}, Value: 1,
			Usage: "highest reward; higher rewards are clipped to it and counted (fixed when the database is created)"},
		&cli.StringFlag{Name: "log-format", EnvVars: []string{"ENVSCHED_LOG_FORMAT"}, Value: "text",
			Usage: "`FORMAT` of the log lines on standard error: text (for people) or json"},
		&cli.StringFlag{Name: "metrics-addr", EnvVars: []string{"ENVSCHED_METRICS_ADDR"},
			Usage: "serve Prometheus metrics at http://`HOST:PORT`/metrics (off by default; an empty HOST is 127.0.0.1)"},
		&cli.StringFlag{Name: "log-level", EnvVars: []string{"ENVSCHED_LOG_LEVEL"}, Value: "info",
			Usage: "least severe log lines shown: debug, info, warn or error"},
	}
}

// runAction builds the Config, starts the daemon and serves until SIGINT, SIGTERM or SIGHUP.
func runAction(c *cli.Context) error {
	logger, logw, err := runLogger(c.String("log-format"), c.String("log-level"), os.Stderr)
	if err != nil {
		return usageError{err}
	}
	defer logw.Close(2 * time.Second) // the last lines, unless nobody reads them
	cfg, err := runConfig(c)
	if err != nil {
		return usageError{err}
	}
	ctx, stop := signal.NotifyContext(c.Context, stopSignals()...)
	defer stop()
	// A log reader that goes away (envsched run 2>&1 | head, a log shipper restarted) must not
	// stop the daemon: by default Go's runtime ends the process at its next log line with
	// SIGPIPE, mid-work. Ignored, such a write fails (the line is lost) and serving goes on.
	signal.Ignore(syscall.SIGPIPE)
	return serveDir(ctx, cfg, logger)
}

// stopSignals are the signals that stop the daemon gracefully: SIGINT, SIGTERM, and SIGHUP (the
// terminal it runs in closed: by default it killed the process mid-commit, which is safe but
// leaves temporary files and an answer unpublished until the next start) unless SIGHUP is
// ignored, as under nohup: then it stays ignored (a handler would undo nohup).
func stopSignals() []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}

// serveDir runs the daemon until ctx is done.
func serveDir(ctx context.Context, cfg daemon.Config, logger *slog.Logger) error {
	d, err := daemon.New(cfg, logger)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Run(ctx); err != nil {
		return fmt.Errorf("daemon stopped: %w", err)
	}
	logger.Info("stopped")
	return d.Close()
}

// minInterval is the shortest interval run accepts: shorter ones would spin a core listing
// folders or rewriting status.json.
const minInterval = time.Millisecond

// checkRunFlags refuses what the Config would silently replace by a default: a zero batch or
// group size, and an interval that is zero, negative or shorter than minInterval.
func checkRunFlags(c *cli.Context) error {
	for _, name := range []string{"batch-size", "group-size"} {
		if c.IsSet(name) && c.Int(name) < 1 {
			return fmt.Errorf("--%s %d: must be at least 1", name, c.Int(name))
		}
	}
	for _, name := range []string{"poll-interval", "rescan-interval", "status-interval"} {
		if d := c.Duration(name); d < minInterval {
			return fmt.Errorf("--%s %v: must be at least %v", name, d, minInterval)
		}
	}
	return nil
}

// runConfig reads the flags and the test-only variables into a Config and validates it.
func runConfig(c *cli.Context) (daemon.Config, error) {
	cfg := daemon.Config{
		Dir:            c.String("dir"),
		DB:             c.String("db"),
		Poll:           c.Bool("poll"),
		PollInterval:   c.Duration("poll-interval"),
		SafetyInterval: c.Duration("rescan-interval"),
		StatusInterval: c.Duration("status-interval"),
		BatchSize:      c.Int("batch-size"),
		GroupSize:      c.Int("group-size"),
		RewardMin:      c.Float64("reward-min"),
		RewardMax:      c.Float64("reward-max"),
		RewardGiven:    c.IsSet("reward-min") || c.IsSet("reward-max"),
		Version:        version,
		CrashPoint:     os.Getenv(envCrashPoint),
		MetricsAddr:    c.String("metrics-addr"),
	}
	if err := checkRunFlags(c); err != nil {
		return cfg, err
	}
	if err := checkDBPlace(cfg.Dir, cfg.DB); err != nil {
		return cfg, err
	}
	// A folder of DIR that is a link or a file exits 2, as for ingest and batch (daemon.New's
	// refusal of it, exit 1, stays for a folder replaced between this check and the start).
	if err := checkInputFolders(cfg.Dir, exchangeFolders...); err != nil {
		return cfg, err
	}
	// The decay is the database's; the scheduler puts it in once the database is open.
	p, err := schedulerParams(c)
	if err != nil {
		return cfg, err
	}
	cfg.Schedule = &p
	if v := os.Getenv(envOverflowEvery); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return cfg, fmt.Errorf("%s=%q: must be a positive integer", envOverflowEvery, v)
		}
		cfg.OverflowEvery = n
	}
	if v := os.Getenv(envProgress); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return cfg, fmt.Errorf("%s=%q: must be a positive duration", envProgress, v)
		}
		cfg.ProgressInterval = d
	}
	if cfg.MetricsAddr != "" {
		if err := metrics.CheckAddr(cfg.MetricsAddr); err != nil {
			return cfg, fmt.Errorf("--metrics-addr: %w", err)
		}
	}
	return cfg, cfg.Validate()
}

// runLogger builds the logger of `envsched run`, which writes w through a logWriter (a reader
// of w that stops reading never stops the daemon); close the writer when done.
func runLogger(format, level string, w io.Writer) (*slog.Logger, *logWriter, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	var mk func(io.Writer) slog.Handler
	switch strings.ToLower(format) {
	case "text":
		mk = func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, opts) }
	case "json":
		mk = func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, opts) }
	default:
		return nil, nil, fmt.Errorf("--log-format %q: use text or json", format)
	}
	lw := newLogWriter(w, droppedNotice(mk))
	return slog.New(mk(lw)), lw, nil
}
