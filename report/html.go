package report

import (
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/envsched/envsched/ledger"
	"github.com/envsched/envsched/summary"
)

// Render writes the report page of d and its figures to w: one self-contained HTML document
// (PNG images as data URIs, the style inline, no scripts).
func Render(w io.Writer, d *Data, figs []Figure) error {
	view := pageView{Data: d, Figures: figs, Calibration: calibration(d), Savings: savingsText(d.Calib.Savings)}
	view.CalibRows, view.CalibEnvRows = calibRows(d.Calib)
	view.CorrRows, view.FactorRows = summary.Corrections(d.Corrections)
	view.Trend = summary.TrendText(d.Corrections.RechosenTrend)
	view.Graded = summary.GradedText(d.Corrections.GradedMaps)
	view.CorrNote = summary.CorrectionsNote(d.Corrections.State)
	if err := page.Execute(w, view); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	return nil
}

// Write collects nothing: it draws d's figures and renders the page.
func Write(w io.Writer, d *Data) error {
	figs, err := Figures(d)
	if err != nil {
		return err
	}
	return Render(w, d, figs)
}

type pageView struct {
	*Data
	Figures      []Figure
	Calibration  string
	CalibRows    []calibRow // per channel, all, last answers
	CalibEnvRows []calibRow // per environment and channel with groups
	Savings      string
	CorrRows     []summary.CorrectionRow // the dispersion corrections, channels then environments
	FactorRows   []summary.FactorRow     // the measured factors
	Trend        string                  // the re-chosen trend in words
	Graded       string                  // the graded calibration's maps in words, "" while none
	CorrNote     string                  // why the corrections are not a stored state's (summary.CorrectionsNote), or ""
}

// calibRow is one row of the report's calibration tables.
type calibRow struct {
	Name string
	ledger.Window
}

// calibRows are the rows of the channel table and of the environment table.
func calibRows(d ledger.Detail) (channels, envs []calibRow) {
	names := []string{ledger.Untried.String(), ledger.Rechosen.String(), ledger.Random.String()}
	for _, ch := range names {
		channels = append(channels, calibRow{ch, d.Channels[ch]})
	}
	channels = append(channels, calibRow{"all", d.Overall}, calibRow{fmt.Sprintf("last %d answers", d.RecentAnswers), d.Recent})
	for _, env := range slices.Sorted(maps.Keys(d.Envs)) {
		for _, ch := range names {
			if w := d.Envs[env][ch]; w.Groups > 0 {
				envs = append(envs, calibRow{env + " / " + ch, w})
			}
		}
	}
	return channels, envs
}

// savingsText says the savings estimate in words, with how it is computed.
func savingsText(s ledger.Savings) string {
	if s.Source == "none" {
		return "No estimate of rollouts saved yet."
	}
	from := "the realised share of the random slots (tasks drawn uniformly)"
	if s.Source == "env_means" {
		from = "the environments' mean rewards (m^G + (1-m)^G per environment: a lower bound for 0/1 rewards, " +
			"as too few random-slot groups were measured)"
	}
	return fmt.Sprintf("Estimated rollouts saved against random choice: %.0f. This is an estimate: random choice "+
		"would waste an estimated %.1f%% of its groups (from %s), the answers wasted %.1f%% (%d of %d rollouts in "+
		"all-equal groups); saved = rollouts random choice would need for the answers' %d informative groups, less the "+
		"%d rollouts spent.", s.RolloutsSaved, 100*s.RandomDegenerate, from, 100*s.AnswersDegenerate,
		s.WastedRollouts, s.Rollouts, s.InformativeGroups, s.Rollouts)
}

// calibration sums predicted against realised degenerate shares over the batches with groups.
func calibration(d *Data) string {
	var pred, real float64
	var n, groups int
	for _, b := range d.Batches {
		if b.Groups == 0 {
			continue
		}
		pred += b.Predicted
		real += b.Realised
		n++
		groups += b.Groups
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("Over %d answered requests with %d groups: predicted %.1f%% degenerate, realised %.1f%%.",
		n, groups, 100*pred/float64(n), 100*real/float64(n))
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"png": func(b []byte) template.URL {
		return template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(b))
	},
	"pct": func(a, b int64) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
	},
	"f3": func(f float64) string { return fmt.Sprintf("%.3f", f) },
	"f4": func(f float64) string { return fmt.Sprintf("%.4g", f) },
	"f1": func(f float64) string { return fmt.Sprintf("%.1f", f) },
	"share": func(n int64, x float64) string {
		if n == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f%%", 100*x)
	},
	"gap": func(n int64, x float64) string {
		if n == 0 {
			return "-"
		}
		return fmt.Sprintf("%+.1f pt", 100*x)
	},
	"mean": func(n int64, x float64) string {
		if n == 0 {
			return "-"
		}
		return fmt.Sprintf("%.3f", x)
	},
	"time": func(t time.Time) string { return t.Format(time.RFC3339) },
	"head": func(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") },
}).Parse(pageHTML))

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8" />
<title>envsched report</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 62em; color: #222; }
h1 { margin-bottom: 0.2em; }
.meta, .caption, .empty { color: #555; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25em 0.8em; text-align: right; }
th:first-child, td:first-child, td.text { text-align: left; }
img { max-width: 100%; height: auto; border: 1px solid #eee; }
code { font-size: 0.9em; }
</style>
</head>
<body>
<h1>envsched report</h1>
<p class="meta">Generated {{time .Generated}} from <code>{{.Source}}</code>{{if .Snapshot}} (a consistent copy written by the running daemon){{end}}.
Reward range [{{.Config.Reward.Min}}, {{.Config.Reward.Max}}], decay {{.Config.Decay}}, database created {{.Config.Created}}.</p>

<section id="summary">
<h2>Summary</h2>
<table>
<tr><th>rollouts</th><td>{{.Counters.Rollouts}}</td></tr>
<tr><th>quarantined lines</th><td>{{.Counters.Quarantined}}</td></tr>
<tr><th>duplicates skipped</th><td>{{.Counters.Duplicates}}</td></tr>
<tr><th>rewards clipped</th><td>{{.Counters.Clipped}}</td></tr>
<tr><th>tasks</th><td>{{.Tasks}} ({{.Never}} never chosen)</td></tr>
<tr><th>environments</th><td>{{len .Envs}}</td></tr>
<tr><th>requests answered</th><td>{{.Counters.RequestsAnswered}}{{if .Counters.LastRequest}} (last <code>{{.Counters.LastRequest}}</code>){{end}}</td></tr>
<tr><th>current round</th><td>{{.Counters.Round}}</td></tr>
</table>
</section>

<section id="environments">
<h2>Environments</h2>
<table>
<tr><th>environment</th><th>tasks</th><th>with rollouts</th><th>never chosen</th><th>rollouts</th><th>mean reward</th><th>degenerate groups</th></tr>
{{range .Envs}}<tr><td>{{.Name}}</td><td>{{.Tasks}}</td><td>{{.TasksSeen}}</td><td>{{index $.NeverByEnv .Name}}</td><td>{{.Rollouts}}</td><td>{{if .Rollouts}}{{f3 .MeanReward}}{{else}}-{{end}}</td><td>{{pct .Degenerate .Groups}} of {{.Groups}}</td></tr>
{{end}}</table>
</section>
{{range .Figures}}
<section id="{{.ID}}" class="figure">
<h2>{{.Title}}</h2>
{{if .PNG}}<img src="{{png .PNG}}" alt="{{.Title}}" />{{else}}<p class="empty">{{.Empty}}</p>{{end}}
<p class="caption">{{.Caption}}{{if eq .ID "degenerate-calibration"}} {{$.Calibration}}{{end}}</p>
</section>
{{end}}
<section id="calibration-ledger">
<h2>How far the predictions can be trusted</h2>
{{with .Calib}}{{if .Overall.Groups}}<p>Every chosen task's prediction is compared with its group once the group is complete
({{.Overall.Groups}} groups measured, {{.Open}} waiting, {{.Expired}} never completed, {{.Unmatched}} rollouts that answered no open prediction).
Channels: <em>never_tried</em> (no rollouts before it was chosen), <em>rechosen</em> (rolled out before), <em>random_slot</em> (drawn at random).</p>
<table id="calibration-channels">
<tr><th>channel</th><th>groups</th><th>predicted degenerate</th><th>realised degenerate</th><th>gap</th><th>predicted mean</th><th>realised mean</th></tr>
{{range $.CalibRows}}<tr><td>{{.Name}}</td><td>{{.Groups}}</td><td>{{share .Groups .PredictedDegenerate}}</td><td>{{share .Groups .RealisedDegenerate}}</td><td>{{gap .Groups .DegenerateGap}}</td><td>{{mean .Groups .PredictedMean}}</td><td>{{mean .Groups .RealisedMean}}</td></tr>
{{end}}</table>
<h3>Per environment and channel</h3>
<table id="calibration-envs">
<tr><th>environment / channel</th><th>groups</th><th>predicted degenerate</th><th>realised degenerate</th><th>gap</th><th>predicted mean</th><th>realised mean</th></tr>
{{range $.CalibEnvRows}}<tr><td>{{.Name}}</td><td>{{.Groups}}</td><td>{{share .Groups .PredictedDegenerate}}</td><td>{{share .Groups .RealisedDegenerate}}</td><td>{{gap .Groups .DegenerateGap}}</td><td>{{mean .Groups .PredictedMean}}</td><td>{{mean .Groups .RealisedMean}}</td></tr>
{{end}}</table>
<p id="calibration-savings">{{$.Savings}}</p>
{{else}}<p class="empty">No group has been measured yet: a chosen task is measured once its group of group_size rollouts (naming its request_id or step) has arrived.</p>{{end}}{{end}}
</section>

<section id="corrections">
<h2>Corrections stored with the last answer</h2>
<p>What envsched corrects its predictions and its exploration with, measured from the groups that came back (README, &ldquo;What envsched corrects with&rdquo;).
Dispersion: a prediction&rsquo;s count is multiplied by <em>scale</em> (below 1: predictions were over-confident), its departure from its environment&rsquo;s centre by <em>slope</em>;
<em>eta</em> and <em>theta</em> shape the count; <em>groups</em> are decayed; the drift offset is in logits. An environment not listed takes <em>never_tried</em>&rsquo;s.</p>
{{if .CorrNote}}<p class="empty" id="corrections-note">{{.CorrNote}}.</p>
{{end}}<table id="corrections-dispersion">
<tr><th>channel</th><th>scale</th><th>slope</th><th>eta</th><th>theta</th><th>groups</th><th>drift offset</th></tr>
{{range .CorrRows}}<tr><td>{{.Name}}</td><td>{{f4 .Scale}}</td><td>{{f4 .Slope}}</td><td>{{f4 .Eta}}</td><td>{{f4 .Theta}}</td><td>{{f1 .Groups}}</td><td>{{if .HasDrift}}{{f4 .DriftOffset}}{{else}}-{{end}}</td></tr>
{{end}}</table>
<table id="corrections-factors">
<tr><th>factor</th><th>value</th><th>groups</th><th>reference groups</th></tr>
{{range .FactorRows}}<tr><td>{{.Name}}</td><td>{{f4 .Value}}</td>{{if .HasGroups}}<td>{{f1 .Groups}}</td><td>{{f1 .ReferenceGroups}}</td>{{else}}<td>-</td><td>-</td>{{end}}</tr>
{{end}}</table>
<p id="corrections-trend">Re-chosen trend: {{.Trend}}.</p>
{{if .Graded}}<p id="corrections-graded">Graded calibration (the logit of p_degenerate of a graded pick moved by intercept + slope·logit): {{.Graded}}.</p>
{{end}}</section>

<section id="chosen">
<h2>Most and least chosen tasks</h2>
<h3>Most chosen</h3>
{{template "tasks" .Most}}
<h3>Least chosen (of those chosen at least once)</h3>
{{if .Least}}{{template "tasks" .Least}}{{else}}<p class="empty">No task has been chosen yet.</p>{{end}}
<p>{{.Never}} of {{.Tasks}} tasks have never been chosen (per environment in the table above).</p>
</section>

<section id="quarantine">
<h2>Quarantine</h2>
{{if .Quarantine.Total}}<p>{{.Quarantine.Total}} lines set aside.</p>
<table id="quarantine-reasons"><tr><th>reason</th><th>lines</th></tr>
{{range .Quarantine.ByReason}}<tr><td>{{.Name}}</td><td>{{.N}}</td></tr>
{{end}}</table>
<table id="quarantine-files"><tr><th>file</th><th>lines</th></tr>
{{range .Quarantine.ByFile}}<tr><td>{{.Name}}</td><td>{{.N}}</td></tr>
{{end}}</table>
<h3>Most recent</h3>
<table id="quarantine-recent"><tr><th>file</th><th>offset</th><th>reason</th><th>first bytes</th></tr>
{{range .Quarantine.Recent}}<tr><td>{{.Path}}</td><td>{{.Offset}}</td><td class="text">{{.Reason}}</td><td class="text"><code>{{head .Head}}</code></td></tr>
{{end}}</table>
{{else}}<p class="empty">Nothing was quarantined.</p>{{end}}
</section>
</body>
</html>
{{define "tasks"}}<table>
<tr><th>task</th><th>chosen</th><th>last chosen at step</th><th>rollouts</th><th>mean reward</th><th>predicted success</th></tr>
{{range .}}<tr><td>{{.Env}} / {{.Task}}</td><td>{{.Chosen}}</td><td>{{.LastChosen}}</td><td>{{.Rollouts}}</td><td>{{if .Rollouts}}{{f3 .MeanReward}}{{else}}-{{end}}</td><td>{{f3 .Predicted}}</td></tr>
{{end}}</table>{{end}}
`
