package report

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
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
)

// FigureIDs lists every figure of a report.
var FigureIDs = []string{FigRollouts, FigReward, FigShares, FigDegenerate, FigPredicted}

// MaxLines is the most environments drawn as lines of their own; the rest are summed as "other".
const MaxLines = 8

// Size of every plot.
const (
	plotWidth  = 8 * vg.Inch
	plotHeight = 3.6 * vg.Inch
)

// Figures draws every figure of d.
func Figures(d *Data) ([]Figure, error) {
	makers := []func(*Data) (Figure, error){rolloutsFigure, rewardFigure, sharesFigure, degenerateFigure, predictedFigure}
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
		Caption: "Rollouts counted at each step (a rollout's own step, or the round it arrived in when it names none)."}
	lines := perStep(d, func(s StepStats) (float64, bool) { return float64(s.Rollouts), true })
	return linesFigure(f, lines, "step", "rollouts", false)
}

func rewardFigure(d *Data) (Figure, error) {
	f := Figure{ID: FigReward, Title: "Mean reward per environment and step",
		Caption: "Mean reward of each environment's rollouts at each step, normalised into [0, 1] (0 is the configured minimum)."}
	lines := perStep(d, func(s StepStats) (float64, bool) {
		return s.Sum / float64(max(1, s.Rollouts)), s.Rollouts > 0
	})
	return linesFigure(f, lines, "step", "mean reward (normalised)", true)
}

func sharesFigure(d *Data) (Figure, error) {
	f := Figure{ID: FigShares, Title: "Environment shares of the chosen batches",
		Caption: "Share of each batch's tasks that each environment received, per answered request."}
	drawn, names := envOrder(d)
	if len(drawn) < len(d.Envs) {
		names = append(names, other)
	}
	lines := make([]series, len(names))
	for i, name := range names {
		lines[i].name = name
	}
	for _, b := range d.Batches {
		shares := batchShares(b, drawn)
		if shares == nil {
			continue
		}
		for i, name := range names {
			lines[i].xys = append(lines[i].xys, plotter.XY{X: float64(b.Step), Y: shares[name]})
		}
	}
	return linesFigure(f, lines, "step", "share of the batch", true)
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
	p.Legend.Top = true
	p.Legend.Left = true
	return p
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
		l.Color, sc.Color = plotutil.Color(i), plotutil.Color(i)
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
