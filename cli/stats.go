package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/envsched/envsched/batcher"
	"github.com/envsched/envsched/ledger"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/schedule"
	"github.com/envsched/envsched/stats"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/summary"
)

func statsCommand() *cli.Command {
	return &cli.Command{
		Name:  "stats",
		Usage: "print per-environment statistics",
		Description: "stats prints, per environment and in total: tasks known, tasks with rollouts, " +
			"rollouts, mean reward (in the configured reward range) and the share of groups of two or " +
			"more rollouts whose rewards were all equal (degenerate), the predicted within-group variance and " +
			"the predicted degenerate share of groups of G; then the quarantined, duplicate and clipped " +
			"counts, the calibration ledger (predicted against realised degenerate groups per channel, the " +
			"last 20 answers, per environment and channel, the reliability table and the estimated rollouts " +
			"saved against random choice) and the corrections stored with the last answer. --json prints " +
			"one JSON object. While `envsched run` holds the database, stats reads a consistent copy the " +
			"daemon writes into DIR/snapshots.",
		Flags: []cli.Flag{
			ingestDirFlag(),
			ingestDBFlag(),
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object instead of a table"},
			&cli.StringFlag{Name: "env", Usage: "only the environment `NAME`"},
			&cli.IntFlag{Name: "group-size", Usage: "the group size `G` of the predicted degenerate share",
				DefaultText: "the group_size of the last answered request, else 8"},
			snapshotWaitFlag(),
		},
		Action: statsAction,
	}
}

// statsRow is the statistics of one environment, or of several summed.
type statsRow struct {
	Tasks            int64   `json:"tasks"`
	TasksSeen        int64   `json:"tasks_seen"`
	Rollouts         int64   `json:"rollouts"`
	MeanReward       float64 `json:"mean_reward"`
	DegenerateGroups int64   `json:"degenerate_groups"`
	Groups           int64   `json:"groups"`
	// NotInCatalog counts the tasks no catalogue row describes (first seen in rollouts): with a
	// catalogue, most often rollouts whose task id or environment is written otherwise than the
	// catalogue's (the log names them)
	NotInCatalog int64 `json:"not_in_catalog"`
	// The predictions for the next step (package schedule): mean over the tasks of the
	// predicted within-group variance, and of the chance that a group of G is degenerate (G is
	// statsReport.GroupSize).
	PredictedVariance   float64 `json:"predicted_variance"`
	PredictedDegenerate float64 `json:"predicted_degenerate"`
}

// statsReport is what `envsched stats` prints; later issues add fields.
type statsReport struct {
	// GroupSize is the G of predicted_degenerate: --group-size, else the group_size of the last
	// answered request, else the default of requests.
	GroupSize   int                 `json:"group_size"`
	Envs        map[string]statsRow `json:"envs"`
	Totals      statsRow            `json:"totals"`
	Quarantined int64               `json:"quarantined"`
	Duplicates  int64               `json:"duplicates"`
	Clipped     int64               `json:"clipped"`
	// Catalogued says that the catalogue describes at least one task (of any environment)
	Catalogued bool `json:"catalogued"`
	// Calibration is envsched's measurement of its own predictions (package ledger)
	Calibration ledger.Detail `json:"calibration"`
	// Corrections are the corrections stored with the last answer (schedule.Corrections), as
	// status.json shows them
	Corrections propagate.Corrections `json:"corrections"`
}

func statsAction(c *cli.Context) error {
	if g := c.Int("group-size"); c.IsSet("group-size") && !schedule.ValidGroupSize(g) {
		return usageError{fmt.Errorf("--group-size %d: want 1 to %d", g, schedule.MaxGroupSize)}
	}
	db, err := openForReading(c)
	if err != nil {
		return err
	}
	defer db.Close()
	g, err := statsGroupSize(db.DB, c.Int("group-size"))
	if err != nil {
		return err
	}
	rep, err := buildStats(db.DB, c.String("env"), g)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return writeStatsTable(c.App.Writer, rep)
}

// buildStats reads the environments' statistics; only is one environment's name, or "" for all.
func buildStats(db *storage.DB, only string, groupSize int) (statsReport, error) {
	rep := statsReport{Envs: map[string]statsRow{}, GroupSize: groupSize}
	var envs map[string]stats.Env
	var ctr storage.Counters
	notInCatalog := map[string]int64{}
	err := db.View(func(r *storage.Reader) error {
		var err error
		if envs, err = r.Envs(); err != nil {
			return err
		}
		err = r.Tasks(false, func(ti storage.TaskInfo) error {
			if ti.InCatalog {
				rep.Catalogued = true
			} else {
				notInCatalog[ti.Env]++
			}
			return nil
		})
		if err != nil {
			return err
		}
		ctr, err = r.Counters()
		rep.Corrections = schedule.Corrections(r.PredictorState())
		return err
	})
	if err != nil {
		return rep, fmt.Errorf("read stats of %s: %w", db.Path(), err)
	}
	all := envs // the calibration summary is over every environment
	if only != "" {
		e, ok := envs[only]
		if !ok {
			mean := ""
			if near := batcher.NearEnv(only, summary.Names(envs)); near != "" {
				mean = fmt.Sprintf(" (did you mean %q?)", near)
			}
			return rep, fmt.Errorf("no environment %q%s (known: %s)", only, mean, knownEnvs(envs))
		}
		envs = map[string]stats.Env{only: e}
		rep.Corrections.Envs = onlyEnv(rep.Corrections.Envs, only)
	}
	rows, total := summary.Envs(envs, db.Config().Reward)
	for _, r := range rows {
		row := newStatsRow(r)
		row.NotInCatalog = notInCatalog[r.Name]
		rep.Envs[r.Name] = row
	}
	rep.Totals = newStatsRow(total)
	for _, row := range rep.Envs {
		rep.Totals.NotInCatalog += row.NotInCatalog
	}
	rep.Quarantined, rep.Duplicates, rep.Clipped = ctr.Quarantined, ctr.Duplicates, ctr.Clipped
	if rep.Calibration, err = readCalibration(db, all, only); err != nil {
		return rep, err
	}
	return rep, addPredictions(db, &rep)
}

func knownEnvs(envs map[string]stats.Env) string {
	if len(envs) == 0 {
		return "none"
	}
	names := summary.Names(envs)
	if len(names) > 10 {
		return strings.Join(names[:10], ", ") + fmt.Sprintf(" and %d more", len(names)-10)
	}
	return strings.Join(names, ", ")
}

func newStatsRow(e summary.Env) statsRow {
	return statsRow{Tasks: e.Tasks, TasksSeen: e.TasksSeen, Rollouts: e.Rollouts, Groups: e.Groups,
		DegenerateGroups: e.Degenerate, MeanReward: e.MeanReward}
}

// meanReward is the mean reward as text ("-" without rollouts: 0.000 read as rewards all at 0).
func (r statsRow) meanReward() string {
	if r.Rollouts == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", r.MeanReward)
}

// degenerateShare is the share of degenerate groups as text ("-" without groups).
func (r statsRow) degenerateShare() string {
	if r.Groups == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(r.DegenerateGroups)/float64(r.Groups))
}

func writeStatsTable(w io.Writer, rep statsReport) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "env\ttasks\twith rollouts\trollouts\tmean reward\tdegenerate groups\tpredicted variance\tpredicted degenerate (G=%d)\t\n", rep.GroupSize)
	names := summary.Names(rep.Envs)
	line := func(name string, r statsRow) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s of %d\t%.3f\t%.1f%%\t\n", cell(name), r.Tasks, r.TasksSeen, r.Rollouts,
			r.meanReward(), r.degenerateShare(), r.Groups, r.PredictedVariance, 100*r.PredictedDegenerate)
	}
	for _, n := range names {
		line(n, rep.Envs[n])
	}
	line("total", rep.Totals)
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "quarantined %d, duplicates %d, clipped %d\n", rep.Quarantined, rep.Duplicates, rep.Clipped); err != nil {
		return err
	}
	if n := rep.Totals.NotInCatalog; rep.Catalogued && n > 0 {
		if _, err := fmt.Fprintf(w, "tasks not in the catalogue: %d, first seen in rollouts (their rollouts count for "+
			"no catalogued task; the log names them, and a catalogued task each reads as)\n", n); err != nil {
			return err
		}
	}
	if err := writeCalibration(w, rep.Calibration); err != nil {
		return err
	}
	return writeCorrections(w, rep.Corrections)
}

// statsGroupSize is the group size of the predicted degenerate share: flag when set (1 to
// schedule.MaxGroupSize), else the group_size of the last answered request, else the default
// of requests.
func statsGroupSize(db *storage.DB, flag int) (int, error) {
	if flag != 0 {
		if flag < 1 || flag > schedule.MaxGroupSize {
			return 0, usageError{fmt.Errorf("--group-size %d: want 1 to %d", flag, schedule.MaxGroupSize)}
		}
		return flag, nil
	}
	g, ok, err := schedule.LastGroupSize(db)
	if err != nil {
		return 0, fmt.Errorf("read the last answer: %w", err)
	}
	if !ok {
		return schedule.DefaultGroupSize, nil
	}
	return g, nil
}

// addPredictions fills in the predicted variance and degenerate share of every row of rep, as
// the scheduler predicts them for the next step (rewards normalised into [0, 1]).
func addPredictions(db *storage.DB, rep *statsReport) error {
	preds, err := schedule.PredictEnvs(db, schedule.Options{BuildGraph: schedule.DefaultBuildGraph}, rep.GroupSize)
	if err != nil {
		return fmt.Errorf("predict: %w", err)
	}
	rep.Totals.PredictedVariance, rep.Totals.PredictedDegenerate = 0, 0
	var tasks int
	for _, name := range summary.Names(rep.Envs) {
		row, p := rep.Envs[name], preds[name]
		row.PredictedVariance, row.PredictedDegenerate = p.Variance, p.Degenerate
		rep.Envs[name] = row
		rep.Totals.PredictedVariance += p.Variance * float64(p.Tasks)
		rep.Totals.PredictedDegenerate += p.Degenerate * float64(p.Tasks)
		tasks += p.Tasks
	}
	if tasks > 0 {
		rep.Totals.PredictedVariance /= float64(tasks)
		rep.Totals.PredictedDegenerate /= float64(tasks)
	}
	return nil
}
