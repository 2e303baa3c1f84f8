package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"

	"github.com/envsched/envsched/ledger"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/stats"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/summary"
)

// readCalibration reads the calibration ledger with its last ledger.RecentAnswers answers; only
// keeps one environment's cells ("" keeps all). The summary stays over every environment.
func readCalibration(db *storage.DB, envs map[string]stats.Env, only string) (ledger.Detail, error) {
	l, err := db.Calibration(ledger.RecentAnswers)
	if err != nil {
		return ledger.Detail{}, fmt.Errorf("read calibration of %s: %w", db.Path(), err)
	}
	d := ledger.Detailed(l, ledger.EnvMeans(envs))
	if only != "" {
		d.Envs = map[string]map[string]ledger.Window{only: d.Envs[only]}
	}
	return d, nil
}

// channelNames are the channels in the order tables show them.
var channelNames = []string{ledger.Untried.String(), ledger.Rechosen.String(), ledger.Random.String()}

// writeCalibration prints the ledger: per channel, the last answers, per environment and
// channel, the reliability table and the savings estimate.
func writeCalibration(w io.Writer, d ledger.Detail) error {
	fmt.Fprintf(w, "\ncalibration: groups measured %d, open %d, expired %d, unmatched rollouts %d\n",
		d.Overall.Groups, d.Open, d.Expired, d.Unmatched)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "channel\tgroups\tpredicted degenerate\trealised degenerate\tgap\tpredicted mean\trealised mean\t\n")
	line := func(name string, x ledger.Window) {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n", name, x.Groups, pct(x.Groups, x.PredictedDegenerate),
			pct(x.Groups, x.RealisedDegenerate), gap(x), num3(x.Groups, x.PredictedMean), num3(x.Groups, x.RealisedMean))
	}
	for _, ch := range channelNames {
		line(ch, d.Channels[ch])
	}
	line("all", d.Overall)
	line(fmt.Sprintf("last %d answers", d.RecentAnswers), d.Recent)
	for _, env := range slices.Sorted(maps.Keys(d.Envs)) {
		for _, ch := range channelNames {
			if x := d.Envs[env][ch]; x.Groups > 0 {
				line(env+" / "+ch, x)
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := writeReliability(w, d.Reliability); err != nil {
		return err
	}
	return writeSavings(w, d.Savings)
}

func writeReliability(w io.Writer, rows []ledger.BinRow) error {
	fmt.Fprintln(w, "\nreliability (all channels): groups by predicted p_degenerate")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "predicted\tgroups\tmean predicted\trealised degenerate\t\n")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t\n", r.Range, r.Groups, pct(r.Groups, r.PredictedDegenerate), pct(r.Groups, r.RealisedDegenerate))
	}
	return tw.Flush()
}

func writeSavings(w io.Writer, s ledger.Savings) error {
	if s.Source == "none" {
		_, err := fmt.Fprintln(w, "\nrollouts saved against random choice: no estimate yet (no group measured)")
		return err
	}
	_, err := fmt.Fprintf(w, "\nrollouts saved against random choice (an estimate): %.0f of %d rollouts measured; "+
		"answers' degenerate share %.1f%%, random choice's estimated %.1f%% (from %s; %d random-slot groups)\n",
		s.RolloutsSaved, s.Rollouts, 100*s.AnswersDegenerate, 100*s.RandomDegenerate, savingsSource(s.Source), s.RandomSlotGroups)
	return err
}

func savingsSource(src string) string {
	if src == "random_slots" {
		return "the random slots' realised share"
	}
	return "the environments' mean rewards, a lower bound for 0/1 rewards"
}

func pct(groups int64, x float64) string {
	if groups == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}

func num3(groups int64, x float64) string {
	if groups == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", x)
}

func gap(x ledger.Window) string {
	if x.Groups == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.1f pt", 100*x.DegenerateGap)
}

// onlyEnv keeps env's entry of envs (none when it has none).
func onlyEnv(envs map[string]propagate.EnvCorrection, env string) map[string]propagate.EnvCorrection {
	out := map[string]propagate.EnvCorrection{}
	if c, ok := envs[env]; ok {
		out[env] = c
	}
	return out
}

// writeCorrections prints the corrections stored with the last answer: the dispersion
// correction per channel and environment (with the environment's drift offset), the
// measured factors of selection and the re-chosen channel's (summary.Corrections' rows).
func writeCorrections(w io.Writer, c propagate.Corrections) error {
	disp, factors := summary.Corrections(c)
	fmt.Fprintln(w, "\ncorrections stored with the last answer: dispersion (the count × scale; groups decayed)")
	if note := summary.CorrectionsNote(c.State); note != "" {
		fmt.Fprintf(w, "(%s)\n", note)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "channel\tscale\tslope\teta\ttheta\tgroups\tdrift offset\t\n")
	for _, r := range disp {
		drift := "-"
		if r.HasDrift {
			drift = fmt.Sprintf("%+.4f", r.DriftOffset)
		}
		fmt.Fprintf(tw, "%s\t%.4g\t%.4g\t%.4g\t%.4g\t%.1f\t%s\t\n", cell(r.Name), r.Scale, r.Slope, r.Eta, r.Theta, r.Groups, drift)
	}
	fmt.Fprint(tw, "\nfactor\tvalue\tgroups\treference groups\t\n")
	for _, r := range factors {
		if r.HasGroups {
			fmt.Fprintf(tw, "%s\t%.4f\t%.1f\t%.1f\t\n", r.Name, r.Value, r.Groups, r.ReferenceGroups)
		} else {
			fmt.Fprintf(tw, "%s\t%.4f\t-\t-\t\n", r.Name, r.Value)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "rechosen_trend: %s\n", summary.TrendText(c.RechosenTrend)); err != nil {
		return err
	}
	if g := summary.GradedText(c.GradedMaps); g != "" {
		if _, err := fmt.Fprintf(w, "graded_maps (logit of p_degenerate moved by intercept + slope·logit): %s\n", g); err != nil {
			return err
		}
	}
	return nil
}
