package report

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

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

// MaxLines is the most environments drawn as lines of their own; the rest are summed as "other".
const MaxLines = 8

// Size of every plot.
const (
	plotWidth  = 8 * vg.Inch
	plotHeight = 3.6 * vg.Inch
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

// series is one named line.
type series struct {
	name string
	xys  plotter.XYs
}

// envOrder is the environments by rollouts, most first, and the set drawn on their own.
func envOrder(d *Data) (drawn map[string]bool, names []string) {
	rows := slices.Clone(d.Envs)
	slices.SortStableFunc(rows, func(a, b EnvRow) int { return cmp.Compare(b.Rollouts, a.Rollouts) })
	drawn = map[string]bool{}
	for i, r := range rows {
		if i < MaxLines || len(rows) == MaxLines+1 {
			drawn[r.Name] = true
			names = append(names, r.Name)
		}
	}
	return drawn, names
}

const other = "other"

// perStep sums the step statistics of each drawn environment (the others as "other") and
// turns them into lines by value.
func perStep(d *Data, value func(StepStats) (float64, bool)) []series {
	drawn, names := envOrder(d)
	sums := map[string]map[int64]*StepStats{}
	for env, steps := range d.Steps {
		name := env
		if !drawn[env] {
			name = other
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
	if sums[other] != nil {
		names = append(names, other)
	}
	var out []series
	for _, name := range names {
		out = append(out, series{name: name, xys: stepXYs(sums[name], value)})
	}
	return out
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

func rolloutsFigure(d *Data) (Figure, error) {
	f := Figure{ID: FigRollouts, Title: "Rollouts per environment and step",
		Caption: "Rollouts counted at each step (a rollout's own step, or the round it arrived in when it names " +
			"none), stacked by environment: the top edge is the total."}
	lines := perStep(d, func(s StepStats) (float64, bool) { return float64(s.Rollouts), true })
	steps, vals := stack(lines)
	if len(steps) == 0 {
		f.Empty = "No rollouts yet."
		return f, nil
	}
	p := newPlot(f.Title, "step", "rollouts")
	names := make([]string, len(lines))
	for i, l := range lines {
		names[i] = l.name
	}
	if err := addBands(p, names, steps, vals); err != nil {
		return f, err
	}
	p.Y.Min = 0
	p.Legend.Left = false
	return render(f, p)
}

// stack turns lines into the union of their x values and each line's value there (0 where it
// has none).
func stack(lines []series) ([]float64, []map[string]float64) {
	at := map[float64]map[string]float64{}
	for _, l := range lines {
		for _, xy := range l.xys {
			if at[xy.X] == nil {
				at[xy.X] = map[string]float64{}
			}
			at[xy.X][l.name] += xy.Y
		}
	}
	steps := make([]float64, 0, len(at))
	for x := range at {
		steps = append(steps, x)
	}
	slices.Sort(steps)
	vals := make([]map[string]float64, len(steps))
	for i, x := range steps {
		vals[i] = at[x]
	}
	return steps, vals
}

func rewardFigure(d *Data) (Figure, error) {
	f := Figure{ID: FigReward, Title: "Mean reward per environment and step",
		Caption: "Mean reward of each environment's rollouts at each step, normalised into [0, 1] (0 is the " +
			"configured minimum); the thick black line is all environments together."}
	mean := func(s StepStats) (float64, bool) { return s.Sum / float64(max(1, s.Rollouts)), s.Rollouts > 0 }
	lines := perStep(d, mean)
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
	lines = append(lines, series{name: allEnvs, xys: stepXYs(all, mean)})
	return linesFigure(f, lines, "step", "mean reward (normalised)", true)
}

// allEnvs names the line of all environments together.
const allEnvs = "all"

func sharesFigure(d *Data) (Figure, error) {
	f := Figure{ID: FigShares, Title: "Environment shares of the chosen batches",
		Caption: "Share of each batch's tasks that each environment received, per answered request, stacked " +
			"(the environments with the most rollouts have bands of their own; the rest are \"other\")."}
	drawn, names := envOrder(d)
	if len(drawn) < len(d.Envs) {
		names = append(names, other)
	}
	var steps []float64
	var shares []map[string]float64
	for _, b := range d.Batches {
		if sh := batchShares(b, drawn); sh != nil {
			steps = append(steps, float64(b.Step))
			shares = append(shares, sh)
		}
	}
	if len(steps) == 0 {
		f.Empty = "No answered request yet."
		return f, nil
	}
	p := newPlot(f.Title, "step", "share of the batch")
	if err := addBands(p, names, steps, shares); err != nil {
		return f, err
	}
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Left, p.Legend.Top = false, true
	return render(f, p)
}

// addBands draws one filled band per name, stacked in order: band i spans from the sum of the
// shares before it to that sum plus its own share, at every step.
func addBands(p *plot.Plot, names []string, steps []float64, shares []map[string]float64) error {
	lower := make([]float64, len(steps))
	for i, name := range names {
		band := make(plotter.XYs, 0, 2*len(steps))
		upper := make([]float64, len(steps))
		for j, x := range steps {
			upper[j] = lower[j] + shares[j][name]
			band = append(band, plotter.XY{X: x, Y: upper[j]})
		}
		for j := len(steps) - 1; j >= 0; j-- {
			band = append(band, plotter.XY{X: steps[j], Y: lower[j]})
		}
		poly, err := plotter.NewPolygon(band)
		if err != nil {
			return err
		}
		poly.Color = seriesColor(i, name)
		poly.LineStyle.Width = 0
		p.Add(poly)
		p.Legend.Add(name, poly)
		lower = upper
	}
	return nil
}

// batchShares is each drawn environment's (and "other"'s) share of b; nil for an empty batch.
func batchShares(b Batch, drawn map[string]bool) map[string]float64 {
	total := 0
	for _, n := range b.Envs {
		total += n
	}
	if total == 0 {
		return nil
	}
	shares := map[string]float64{}
	for env, n := range b.Envs {
		name := env
		if !drawn[env] {
			name = other
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
	lines := []series{{"predicted", pred}, {"realised", real}}
	if len(real) == 0 {
		f.Empty = "No answered request has groups of rollouts yet (rollouts name the batch by request_id or step)."
		return f, nil
	}
	return linesFigure(f, lines, "step", "share of groups", true)
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
	lines := []series{{allEnvs, binXYs(d.Calib.Reliability)}}
	for _, ch := range []ledger.Channel{ledger.Untried, ledger.Rechosen, ledger.Random} {
		lines = append(lines, series{ch.String(), binXYs(d.Calib.ChannelReliability[ch.String()])})
	}
	lines = append(lines, series{"perfect", plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}}})
	f, err := linesFigure(f, lines, "predicted p_degenerate (mean of the bin)", "realised degenerate share", true)
	return f, err
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

// palette holds distinct colours for up to MaxLines series plus two (tab10's); "other" is grey.
var palette = []color.RGBA{{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
	{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {188, 189, 34, 255},
	{23, 190, 207, 255}, {127, 127, 127, 255}}

func seriesColor(i int, name string) color.Color {
	switch name {
	case other:
		return color.RGBA{200, 200, 200, 255}
	case allEnvs:
		return color.Black
	}
	return palette[i%len(palette)]
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	p.Y.Tick.Marker = plainTicks{}
	p.Legend.Top = true
	p.Legend.Left = true
	return p
}

// plainTicks are gonum's default ticks labelled without trailing zeros ("250", not "250.00").
type plainTicks struct{}

// Ticks returns the default ticks of [lo, hi] with plain labels.
func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'g', 6, 64)
		}
	}
	return ticks
}

// linesFigure draws lines with points; unit fixes the y axis to [0, 1].
func linesFigure(f Figure, lines []series, x, y string, unit bool) (Figure, error) {
	points := 0
	for _, s := range lines {
		points += len(s.xys)
	}
	if points == 0 {
		f.Empty = "Nothing to plot yet."
		return f, nil
	}
	p := newPlot(f.Title, x, y)
	for i, s := range lines {
		if len(s.xys) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(s.xys)
		if err != nil {
			return f, err
		}
		l.Color, sc.Color = seriesColor(i, s.name), seriesColor(i, s.name)
		if s.name == allEnvs {
			l.Width = vg.Points(2.5)
		}
		sc.Radius = vg.Points(1.5)
		p.Add(l, sc)
		p.Legend.Add(s.name, l)
	}
	if unit {
		p.Y.Min, p.Y.Max = 0, 1
	} else {
		p.Y.Min = 0
	}
	return render(f, p)
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
