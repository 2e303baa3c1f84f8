package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/envsched/envsched/daemon"
	"github.com/envsched/envsched/fsutil"
	"github.com/envsched/envsched/internal/procview"
	"github.com/envsched/envsched/ledger"
	"github.com/envsched/envsched/summary"
)

// statusStaleFactor times the daemon's default heartbeat interval is the age after which
// status.json no longer means the daemon is running.
const statusStaleFactor = 3

// errNotRunning is returned after `status` has shown a daemon that is not running (exit 1).
var errNotRunning = errors.New("not running")

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "show the daemon's DIR/status.json, and whether it is running",
		UsageText: "envsched status --dir DIR [--json] [--stale-after DURATION]",
		Description: "status prints what the daemon last wrote into DIR/status.json, with the age of the " +
			"heartbeat. A heartbeat older than --stale-after (default three times the default " +
			"--status-interval of envsched run; raise it if you run with a longer interval) means the " +
			"daemon is not running, and so does a pid that no longer exists on this machine. A heartbeat from " +
			"the future (the clocks of the daemon and this machine disagree) is said so, and more than " +
			"--stale-after ahead is not taken as running. Exit code 0 " +
			"when it is running, 1 when it is not (or status.json " +
			"is missing). --json prints status.json unchanged.",
		Flags: []cli.Flag{
			ingestDirFlag(),
			&cli.BoolFlag{Name: "json", Usage: "print status.json as it is"},
			&cli.DurationFlag{Name: "stale-after", EnvVars: []string{"ENVSCHED_STALE_AFTER"},
				Value: statusStaleFactor * daemon.DefaultStatusInterval,
				Usage: "a heartbeat older than `DURATION` means the daemon is not running"},
		},
		Action: statusAction,
	}
}

func statusAction(c *cli.Context) error {
	if d := c.Duration("stale-after"); d <= 0 {
		return usageError{fmt.Errorf("--stale-after %v: want a positive duration (a heartbeat older than it means not running)", d)}
	}
	path := filepath.Join(c.String("dir"), daemon.StatusFile)
	data, err := fsutil.ReadRegularMax(path, 16<<20) // a FIFO or a huge file put there must not block it
	if errors.Is(err, fs.ErrNotExist) {
		if why := notExchange(c.String("dir")); why != "" { // --dir the wrong folder: do not advise serving it
			return fmt.Errorf("%s: %w: no status.json, and %s", c.String("dir"), errNotRunning, why)
		}
		return fmt.Errorf("%s: %w: no status.json (start it with `envsched run --dir %s`)",
			c.String("dir"), errNotRunning, c.String("dir"))
	}
	if err != nil {
		return err // it names the path (fsutil.ReadRegularMax)
	}
	var s daemon.Status
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("%s is not a status file: %w", path, err)
	}
	age, ok := heartbeatAge(s, time.Now())
	stale := c.Duration("stale-after")
	fresh := ok && age <= stale && age >= -stale
	running := fresh && pidAlive(s)
	if c.Bool("json") {
		_, err = c.App.Writer.Write(data)
	} else {
		err = writeStatusText(c.App.Writer, s, age, ok, fresh)
	}
	if err != nil {
		return err
	}
	if !running {
		return fmt.Errorf("%s: %w (heartbeat %s)", c.String("dir"), errNotRunning, ageText(age, ok))
	}
	return nil
}

// heartbeatAge is how long ago status.json was updated, negative when its time is ahead of this
// machine's clock; false when updated_at is unreadable.
func heartbeatAge(s daemon.Status, now time.Time) (time.Duration, bool) {
	t, err := time.Parse(time.RFC3339, s.UpdatedAt)
	if err != nil {
		return 0, false
	}
	return now.Sub(t), true
}

// ageText says how old a heartbeat is. One from the future says so plainly, with its cause (the
// daemon's clock is ahead of this machine's, or this one was set back): it was shown as "0s
// old". updated_at has whole seconds, so up to a second ahead is the same second.
func ageText(age time.Duration, ok bool) string {
	switch {
	case !ok:
		return "time unreadable"
	case age < -time.Second:
		return fmt.Sprintf("%s in the future: the daemon's clock is ahead of this machine's (or this one was set "+
			"back), so the heartbeat's age cannot be told", (-age).Round(time.Second))
	}
	return max(0, age).Round(time.Second).String() + " old"
}

// writeStatusText prints s for people. fresh says the heartbeat is recent; whether the process
// exists on this machine decides between running, stopped and stuck.
func writeStatusText(w io.Writer, s daemon.Status, age time.Duration, ok, fresh bool) error {
	alive := pidAlive(s)
	var state string
	switch {
	case fresh && alive && !procview.Visible(s.PIDView):
		state = fmt.Sprintf("running (by its heartbeat: process %d is in another PID namespace or on another machine, "+
			"not looked up from here)", s.PID)
	case fresh && alive:
		state = "running"
	case fresh:
		state = fmt.Sprintf("NOT RUNNING (process %d is gone from this machine; last heartbeat %s)", s.PID, ageText(age, ok))
	case ok && age < 0:
		proc := map[bool]string{true: "exists", false: "is gone from this machine"}[alive]
		if !procview.Visible(s.PIDView) {
			proc = "is in another PID namespace or on another machine"
		}
		state = fmt.Sprintf("UNKNOWN, taken as NOT RUNNING (heartbeat %s; process %d %s)", ageText(age, ok), s.PID, proc)
	case alive && procview.Visible(s.PIDView):
		state = fmt.Sprintf("NOT RUNNING (last heartbeat %s; process %d still exists: it may be stuck)", ageText(age, ok), s.PID)
	default:
		state = "NOT RUNNING (last heartbeat " + ageText(age, ok) + ")"
	}
	fmt.Fprintf(w, "envsched %s: %s\n", cell(s.Version), state)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	last := "none"
	if s.LastRequest != nil {
		last = cell(*s.LastRequest)
	}
	fmt.Fprintf(tw, "  heartbeat\t%s (%s)\n", ageText(age, ok), cell(s.UpdatedAt))
	fmt.Fprintf(tw, "  started\t%s (pid %d, watch mode %s)\n", cell(s.StartedAt), s.PID, cell(s.WatchMode))
	fmt.Fprintf(tw, "  database\t%s\n", cell(s.DB))
	fmt.Fprintf(tw, "  rollouts\t%d (quarantined %d, duplicates %d, clipped %d)\n", s.Rollouts,
		s.Quarantined, s.Duplicates, s.Clipped)
	fmt.Fprintf(tw, "  tasks\t%d in %d environments\n", s.Tasks, s.Envs)
	fmt.Fprintf(tw, "  requests\t%d answered, last %s\n", s.RequestsAnswered, last)
	writeCalibStatus(tw, s.Calibration)
	if c := s.Corrections; c != nil { // a status.json of an older daemon has none
		fmt.Fprintf(tw, "  corrections	exploration_return %.4f, random_return %.4f, coverage_return %.4f, rechosen_factor %.4f, "+
			"%s%s%snever_tried scale %.4g (see envsched stats)\n", c.ExplorationReturn.Factor, c.RandomReturn.Factor,
			c.CoverageReturn.Factor, c.RechosenFactor, factorText("never_tried_factor", c.NeverTriedFactor),
			factorText("rechosen_low_factor", c.RechosenLowFactor), factorText("random_factor", c.RandomFactor),
			c.Dispersion["never_tried"].Scale)
		if note := summary.CorrectionsNote(c.State); note != "" {
			fmt.Fprintf(tw, "  \t(%s)\n", note)
		}
	}
	return tw.Flush()
}

// factorText is a count factor of the corrections line, or nothing when the status.json of a
// daemon older than the factor has none (0: a factor is positive whenever written).
func factorText(name string, v float64) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%s %.4f, ", name, v)
}

// writeCalibStatus prints the calibration of status.json in two lines: how far the predictions
// held, and the savings estimate, said as one.
func writeCalibStatus(w io.Writer, c ledger.Summary) {
	if c.Overall.Groups == 0 {
		fmt.Fprintf(w, "  predictions\tno group measured yet (%d waiting for their rollouts)\n", c.Open)
		return
	}
	fmt.Fprintf(w, "  predictions\tlast %d answers: %.1f%% of groups predicted degenerate, %.1f%% were (%d groups); all: %.1f%% / %.1f%% (%d)\n",
		c.RecentAnswers, 100*c.Recent.PredictedDegenerate, 100*c.Recent.RealisedDegenerate, c.Recent.Groups,
		100*c.Overall.PredictedDegenerate, 100*c.Overall.RealisedDegenerate, c.Overall.Groups)
	if sv := c.Savings; sv.Source != "none" {
		saved := fmt.Sprintf("about %.0f rollouts against random choice", sv.RolloutsSaved)
		if math.Round(sv.RolloutsSaved) < 0 { // "about -111 rollouts saved" read as a typo (the walkthrough's toy run)
			saved = fmt.Sprintf("none: about %.0f rollouts more than random choice", -sv.RolloutsSaved)
		}
		fmt.Fprintf(w, "  saved\t%s (an estimate: random's degenerate share %.1f%% from %s; see envsched stats)\n",
			saved, 100*sv.RandomDegenerate, strings.ReplaceAll(sv.Source, "_", " "))
	}
}

// pidAlive reports whether the daemon's process exists: looked up by its id when status.json's
// view of it is this process's (or it names none), else taken as alive, since an id of another
// PID namespace or machine names nothing here, or another process (a running daemon was said to
// be NOT RUNNING, exit 1, by a status run in another container); the heartbeat decides then.
func pidAlive(s daemon.Status) bool {
	if !procview.Visible(s.PIDView) {
		return true
	}
	pid := s.PID
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
