package report

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/envsched/envsched/internal/chart"
	"github.com/envsched/envsched/ledger"
)

// Figure is one plot of the report.
type Figure struct {
	ID      string // stable identifier, used as the HTML element id
	Title   string
	Caption string // what to read in it
	PNG     []byte // nil when there is nothing to plot yet
	Empty   string // why PNG is nil
}

// Figure IDs, in the order of the report.
const (
	FigRollouts   = "rollouts-per-step"
	FigReward     = "mean-reward-per-step"
	FigShares     = "env-shares"
	FigDegenerate = "degenerate-calibration"
	FigPredicted  = "predicted-success"
	FigReliable   = "reliability"
)

// FigureIDs lists every figure of a report.
var FigureIDs = []string{FigRollouts, FigReward, FigShares, FigDegenerate, FigReliable, FigPredicted}

// MaxPanels is the most panels of a per-environment figure: with more environments, the
// MaxPanels−1 with the most rollouts get panels of their own and the rest share "others".
const MaxPanels = 24

// Size of the single plots, and of the small multiples (four to a row).
const (
	plotWidth    = 6.6 * vg.Inch
	plotHeight   = 3.4 * vg.Inch
	legendWidth  = 1.5 * vg.Inch
	panelWidth   = 2.45 * vg.Inch
	panelHeight  = 2.2 * vg.Inch
	panelColumns = 4
)

// Figures draws every figure of d.
func Figures(d *Data) ([]Figure, error) {
	makers := []func(*Data) (Figure, error){rolloutsFigure, rewardFigure, sharesFigure, degenerateFigure,
		reliabilityFigure, predictedFigure}
	out := make([]Figure, 0, len(makers))
	for _, m := range makers {
		f, err := m(d)
		if err != nil {
			return nil, fmt.Errorf("figure %s: %w", f.ID, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// envPanels returns the panel names in order (environments by rollouts, most first, then
// "others" when there are more than MaxPanels) and the panel of every environment.
func envPanels(d *Data) (names []string, panelOf map[string]string) {
	rows := slices.Clone(d.Envs)
	slices.SortStableFunc(rows, func(a, b EnvRow) int { return cmp.Compare(b.Rollouts, a.Rollouts) })
	panelOf = map[string]string{}
	for i, r := range rows {
		if len(rows) <= MaxPanels || i < MaxPanels-1 {
			panelOf[r.Name] = r.Name
			names = append(names, r.Name)
		} else {
			panelOf[r.Name] = others
		}
	}
	if len(rows) > MaxPanels {
		names = append(names, others)
	}
	return names, panelOf
}

// others is the panel of the environments beyond MaxPanels−1.
const others = "others"

// perPanelSteps sums the step statistics of the environments of each panel.
func perPanelSteps(d *Data) ([]string, map[string]map[int64]*StepStats) {
	names, panelOf := envPanels(d)
	sums := map[string]map[int64]*StepStats{}
	for env, steps := range d.Steps {
		name := panelOf[env]
		if name == "" {
			name = env // rollouts of an environment the table does not list: a panel of its own
			names = append(names, env)
			panelOf[env] = env
		}
		if sums[name] == nil {
			sums[name] = map[int64]*StepStats{}
		}
		for round, s := range steps {
			acc := sums[name][round]
			if acc == nil {
				acc = &StepStats{}
				sums[name][round] = acc
			}
			acc.Rollouts += s.Rollouts
			acc.Sum += s.Sum
		}
	}
	return names, sums
}

func stepXYs(steps map[int64]*StepStats, value func(StepStats) (float64, bool)) plotter.XYs {
	rounds := make([]int64, 0, len(steps))
	for r := range steps {
		rounds = append(rounds, r)
	}
	slices.Sort(rounds)
	var xys plotter.XYs
	for _, r := range rounds {
		if v, ok := value(*steps[r]); ok {
			xys = append(xys, plotter.XY{X: float64(r), Y: v})
		}
	}
	return xys
}

// panelStyle is the colour of an environment's panel; "others" is drawn plainly in grey.
func panelStyle(name string) chart.Style {
	if name == others {
		return chart.Style{Color: chart.Grey, Width: vg.Points(1.2)}
	}
	return chart.Style{Color: chart.Blue, Width: vg.Points(1.2)}
}

// smallMultiples renders one small panel per name, sharing the x range and (unless free) the
// y range [ymin, ymax] (ymax 0: the data's largest value).
func smallMultiples(f Figure, panels []chart.Panel, ymin, ymax float64) (Figure, error) {
	xlo, xhi, yhi := math.Inf(1), math.Inf(-1), 0.0
	for _, pn := range panels {
		for _, l := range pn.Lines {
			for _, xy := range l.XYs {
				xlo, xhi, yhi = min(xlo, xy.X), max(xhi, xy.X), max(yhi, xy.Y)
			}
		}
	}
	if math.IsInf(xlo, 0) {
		f.Empty = "Nothing to plot yet."
		return f, nil
	}
	if ymax == 0 {
		ymax = yhi * 1.05
	}
	if xhi == xlo {
		xlo, xhi = xlo-1, xhi+1
	}
	for i := range panels {
		panels[i].XMin, panels[i].XMax = xlo, xhi
		panels[i].YMin, panels[i].YMax = ymin, max(ymax, ymin+1e-9)
		panels[i].Small = true
	}
	fig := chart.Figure{Cols: min(panelColumns, len(panels)), PanelWidth: panelWidth, PanelHeight: panelHeight}
	png, err := fig.PNG(panels)
	if err != nil {
		return f, err
	}
	f.PNG = png
	return f, nil
}

func rolloutsFigure(d *Data) (Figure, error) {
	f := Figure{ID: FigRollouts, Title: "Rollouts per environment and step",
		Caption: "One panel per environment, most rollouts first (beyond " + strconv.Itoa(MaxPanels-1) + " environments " +
			"the rest share the grey panel \"others\"): rollouts counted at each step (a rollout's own step, or the " +
			"round it arrived in when it names none). The panels share their axes."}
	names, sums := perPanelSteps(d)
	var panels []chart.Panel
	for _, name := range names {
		xys := stepXYs(sums[name], func(s StepStats) (float64, bool) { return float64(s.Rollouts), true })
		if len(xys) == 0 {
			continue
		}
		st := panelStyle(name)
		st.Color = lighter(st.Color)
		panels = append(panels, chart.Panel{Title: name, X: "step", Lines: []chart.Line{{Name: name, XYs: xys, Style: st, Fill: true}}})
	}
	if len(panels) == 0 {
		f.Empty = "No rollouts yet."
		return f, nil
	}
	return smallMultiples(f, panels, 0, 0)
}

// lighter is c mixed half with white, for filled areas.
func lighter(c color.RGBA) color.RGBA {
	return color.RGBA{R: c.R/2 + 127, G: c.G/2 + 127, B: c.B/2 + 127, A: 255}
}

func rewardFigure(d *Data) (Figure, error) {
	f := Figure{ID: FigReward, Title: "Mean reward per environment and step",
		Caption: "One panel per environment (as above): the mean reward of its rollouts at each step, normalised " +
			"into [0, 1] (0 is the configured minimum), in colour; in grey behind it, all environments together."}
	mean := func(s StepStats) (float64, bool) { return s.Sum / float64(max(1, s.Rollouts)), s.Rollouts > 0 }
	names, sums := perPanelSteps(d)
	all := map[int64]*StepStats{}
	for _, steps := range d.Steps {
		for round, s := range steps {
			if all[round] == nil {
				all[round] = &StepStats{}
			}
			all[round].Rollouts += s.Rollouts
			all[round].Sum += s.Sum
		}
	}
	allXYs := stepXYs(all, mean)
	var panels []chart.Panel
	for _, name := range names {
		xys := stepXYs(sums[name], mean)
		if len(xys) == 0 {
			continue
		}
		panels = append(panels, chart.Panel{Title: name, X: "step", Lines: []chart.Line{
			{Name: allEnvs, XYs: allXYs, Style: chart.Style{Color: chart.LightGrey, Width: vg.Points(1.6)}},
			{Name: name, XYs: xys, Style: panelStyle(name)}}})
	}
	if len(panels) == 0 {
		f.Empty = "No rollouts yet."
		return f, nil
	}
	return smallMultiples(f, panels, 0, 1)
}

// allEnvs names the line of all environments together.
const allEnvs = "all"

func sharesFigure(d *Data) (Figure, error) {
	f := Figure{ID: FigShares, Title: "Environment shares of the chosen batches",
		Caption: "One panel per environment (as above): the share of each answered batch's tasks it received, " +
			"per request step. The panels share their axes."}
	names, panelOf := envPanels(d)
	lines := map[string]plotter.XYs{}
	for _, b := range d.Batches {
		sh := batchShares(b, panelOf)
		if sh == nil {
			continue
		}
		for _, name := range names {
			lines[name] = append(lines[name], plotter.XY{X: float64(b.Step), Y: sh[name]})
		}
	}
	var panels []chart.Panel
	for _, name := range names {
		if len(lines[name]) > 0 {
			panels = append(panels, chart.Panel{Title: name, X: "step", Lines: []chart.Line{{Name: name, XYs: lines[name], Style: panelStyle(name)}}})
		}
	}
	if len(panels) == 0 {
		f.Empty = "No answered request yet."
		return f, nil
	}
	return smallMultiples(f, panels, 0, 0)
}

// batchShares is each panel's share of b; nil for an empty batch.
func batchShares(b Batch, panelOf map[string]string) map[string]float64 {
	total := 0
	for _, n := range b.Envs {
		total += n
	}
	if total == 0 {
		return nil
	}
	shares := map[string]float64{}
	for env, n := range b.Envs {
		name := panelOf[env]
		if name == "" {
			name = others
		}
		shares[name] += float64(n) / float64(total)
	}
	return shares
}

func degenerateFigure(d *Data) (Figure, error) {
	f := Figure{ID: FigDegenerate, Title: "Degenerate groups: predicted against realised",
		Caption: "Per answered request: the mean predicted chance that a chosen task's group is degenerate (all " +
			"rewards equal), and the share of the groups of two or more rollouts answering it that were. " +
			"Close lines mean a calibrated predictor."}
	var pred, real plotter.XYs
	for _, b := range d.Batches {
		if b.Size > 0 {
			pred = append(pred, plotter.XY{X: float64(b.Step), Y: b.Predicted})
		}
		if b.Groups > 0 {
			real = append(real, plotter.XY{X: float64(b.Step), Y: b.Realised})
		}
	}
	if len(real) == 0 {
		f.Empty = "No answered request has groups of rollouts yet (rollouts name the batch by request_id or step)."
		return f, nil
	}
	pn := chart.Panel{X: "step", Y: "share of groups", YMin: 0, YMax: 1, Legend: true, Lines: []chart.Line{
		{Name: "predicted", XYs: pred, Style: chart.Style{Color: chart.Blue, Dashes: chart.Dashed, Width: vg.Points(1.8)}},
		{Name: "realised", XYs: real, Style: chart.Style{Color: chart.Vermilion, Width: vg.Points(1.8)}}}}
	png, err := chart.Figure{Cols: 1, PanelWidth: plotWidth, PanelHeight: plotHeight, LegendWidth: legendWidth}.PNG([]chart.Panel{pn})
	if err != nil {
		return f, err
	}
	f.PNG = png
	return f, nil
}

// reliabilityFigure is the reliability diagram of the calibration ledger: per bin of predicted
// p_degenerate, the mean prediction against the realised share, per channel and over all.
func reliabilityFigure(d *Data) (Figure, error) {
	f := Figure{ID: FigReliable, Title: "Reliability of the predicted degenerate chance",
		Caption: "Every measured group (a chosen task's group of rollouts, complete) in bins of its predicted " +
			"p_degenerate: the mean prediction of the bin (x) against the share of its groups that came back " +
			"all-equal (y), over all channels and per channel. Points on the diagonal mean the predictions can be " +
			"taken at their word; above it, more groups were wasted than predicted."}
	if d.Calib.Overall.Groups == 0 {
		f.Empty = "No group has been measured yet (a chosen task's group of group_size rollouts, naming its request or step)."
		return f, nil
	}
	w := vg.Points(1.8)
	lines := []chart.Line{{Name: allEnvs, XYs: binXYs(d.Calib.Reliability), Style: chart.Style{Color: chart.Black, Width: w}}}
	styles := []chart.Style{{Color: chart.Blue, Dashes: chart.Dashed}, {Color: chart.Orange, Dashes: chart.DashDot}, {Color: chart.Green, Dashes: chart.Dotted}}
	for i, ch := range []ledger.Channel{ledger.Untried, ledger.Rechosen, ledger.Random} {
		lines = append(lines, chart.Line{Name: ch.String(), XYs: binXYs(d.Calib.ChannelReliability[ch.String()]), Style: styles[i]})
	}
	lines = append(lines, chart.Line{Name: "perfect", XYs: plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}}, Style: chart.Style{Color: chart.LightGrey, Dashes: chart.LongDash}})
	pn := chart.Panel{X: "predicted p_degenerate (mean of the bin)", Y: "realised degenerate share",
		XMin: 0, XMax: 1, YMin: 0, YMax: 1, Legend: true, Lines: lines}
	png, err := chart.Figure{Cols: 1, PanelWidth: plotWidth, PanelHeight: plotHeight, LegendWidth: legendWidth}.PNG([]chart.Panel{pn})
	if err != nil {
		return f, err
	}
	f.PNG = png
	return f, nil
}

func binXYs(rows []ledger.BinRow) plotter.XYs {
	var xys plotter.XYs
	for _, r := range rows {
		if r.Groups > 0 {
			xys = append(xys, plotter.XY{X: r.PredictedDegenerate, Y: r.RealisedDegenerate})
		}
	}
	return xys
}

func predictedFigure(d *Data) (Figure, error) {
	f := Figure{ID: FigPredicted, Title: "Predicted success of every task now",
		Caption: "Histogram over tasks of the predicted success (posterior mean of package propagate: environment " +
			"prior, own evidence, evidence borrowed through the task graph), at the current round."}
	if len(d.Predicted) == 0 {
		f.Empty = "No tasks yet."
		return f, nil
	}
	p := newPlot(f.Title, "predicted success", "tasks")
	h, err := plotter.NewHist(plotter.Values(d.Predicted), 20)
	if err != nil {
		return f, err
	}
	h.FillColor = color.RGBA{R: 70, G: 130, B: 180, A: 255}
	p.Add(h)
	p.X.Min, p.X.Max = 0, 1
	return render(f, p)
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	p.X.Tick.Marker, p.Y.Tick.Marker = chart.RoundTicks{}, chart.RoundTicks{}
	return p
}

func render(f Figure, p *plot.Plot) (Figure, error) {
	wt, err := p.WriterTo(plotWidth, plotHeight, "png")
	if err != nil {
		return f, err
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return f, err
	}
	f.PNG = buf.Bytes()
	return f, nil
}
