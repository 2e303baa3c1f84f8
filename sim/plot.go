package sim

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/envsched/envsched/internal/chart"
)

// Plot file names written by WritePlots.
const (
	PlotScoreByStep     = "heldout_by_step.png"
	PlotScoreByRollouts = "heldout_by_rollouts.png"
	PlotDegenerate      = "degenerate_by_step.png"
)

// SmoothHalf is the half-width of the moving average of the degenerate-share plot: each point
// is the mean of 2·SmoothHalf+1 steps; the raw per-step medians are the band behind it.
const SmoothHalf = 4

// PlotGroup is one panel of the plots: envsched beside a family of policies.
type PlotGroup struct {
	Title    string
	Policies []string
}

// PlotGroups are the panels, top to bottom: the published baselines, the references that know
// the truth, and envsched's ablations. envsched (thick black) is in every panel; random (grey)
// in the first two.
var PlotGroups = []PlotGroup{
	{"envsched against the baselines", []string{"envsched", "random", "uniform-env", "dapo", "greso", "mopps", "env-bandit"}},
	{"envsched against references that know the truth", []string{"envsched", "random", "oracle", "envsched-truth"}},
	{"envsched and its ablations", []string{"envsched", "envsched-nograph", "envsched-notext", "envsched-nofeatures",
		"envsched-norechosen", "envsched-nocalib", "envsched-nocross", "envsched-noquota", "envsched-nopenalty", "envsched-nodecay"}},
	{"envsched and a further ablation", []string{"envsched", "envsched-nocovreturn"}},
}

// PolicyStyles gives every policy its own colour and dash pattern, the same in every plot. No
// two policies share both, and no two policies of one panel share a colour.
var PolicyStyles = map[string]chart.Style{
	"envsched":             {Color: chart.Black, Width: vg.Points(2.6)},
	"random":               {Color: chart.Grey, Width: vg.Points(1.8)},
	"uniform-env":          {Color: chart.SkyBlue, Dashes: chart.Dashed},
	"dapo":                 {Color: chart.Orange},
	"greso":                {Color: chart.Vermilion, Dashes: chart.DashDot},
	"mopps":                {Color: chart.Blue, Dashes: chart.Dotted, Width: vg.Points(1.9)},
	"env-bandit":           {Color: chart.Purple, Dashes: chart.LongDash},
	"oracle":               {Color: chart.Green},
	"envsched-truth":       {Color: chart.Blue, Dashes: chart.Dashed},
	"envsched-nograph":     {Color: chart.Orange, Dashes: chart.Dashed},
	"envsched-notext":      {Color: chart.SkyBlue},
	"envsched-nofeatures":  {Color: chart.Green, Dashes: chart.Dashed},
	"envsched-norechosen":  {Color: chart.Vermilion},
	"envsched-nocalib":     {Color: chart.Grey, Dashes: chart.Dotted, Width: vg.Points(1.9)},
	"envsched-nocross":     {Color: chart.Purple, Dashes: chart.Dotted, Width: vg.Points(1.9)},
	"envsched-noquota":     {Color: chart.Yellow},
	"envsched-nopenalty":   {Color: chart.Brown, Dashes: chart.DashDot},
	"envsched-nodecay":     {Color: chart.Blue, Dashes: chart.LongDash},
	"envsched-nocovreturn": {Color: chart.Vermilion, Dashes: chart.Dotted, Width: vg.Points(1.9)},
}

// WritePlots writes three PNG figures into dir, each with one panel per PlotGroup (medians
// across seeds; panels share their axes): held-out score against steps, held-out score against
// rollouts spent, and the share of degenerate groups per step, smoothed over 2·SmoothHalf+1
// steps in front of a band of the raw per-step medians. Policies of the run that no group names
// get a panel of their own. It returns the paths written.
func WritePlots(dir string, res Result) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	curves := res.Curves()
	title := fmt.Sprintf("scenario %s: medians over %d seeds, B = %d, G = %d", res.Config.Scenario.Name,
		res.Config.Seeds, res.Config.BatchSize, res.Config.GroupSize)
	specs := []struct {
		file, y, x string
		line       func(name string, c Curve) chart.Line
		zero       bool
	}{
		{PlotScoreByStep, "held-out score", "training step", func(n string, c Curve) chart.Line {
			return chart.Line{Name: n, XYs: series(nil, c.Score, 0)}
		}, false},
		{PlotScoreByRollouts, "held-out score", "rollouts spent", func(n string, c Curve) chart.Line {
			return chart.Line{Name: n, XYs: series(c.Rollouts, c.Score, 0)}
		}, false},
		{PlotDegenerate, "share of degenerate groups", "training step", degenerateLine, true},
	}
	var paths []string
	for _, sp := range specs {
		panels := plotPanels(res.Config.Policies, curves, sp.x, sp.y, sp.line, sp.zero)
		fig := chart.Figure{Title: title, Cols: 1, PanelWidth: 7 * vg.Inch, PanelHeight: 3 * vg.Inch,
			LegendWidth: 1.9 * vg.Inch}
		png, err := fig.PNG(panels)
		if err != nil {
			return paths, fmt.Errorf("plot %s: %w", sp.file, err)
		}
		path := filepath.Join(dir, sp.file)
		if err := os.WriteFile(path, png, 0o644); err != nil {
			return paths, fmt.Errorf("plot %s: %w", sp.file, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// degenerateLine is a policy's degenerate share per step from step 1, smoothed, over the band
// of its raw values.
func degenerateLine(name string, c Curve) chart.Line {
	raw := series(nil, c.Degenerate, 1)
	ys := make([]float64, len(raw))
	for i, xy := range raw {
		ys[i] = xy.Y
	}
	sm := chart.Smooth(ys, SmoothHalf)
	lo, hi := chart.Envelope(ys, SmoothHalf)
	xys := make(plotter.XYs, len(raw))
	for i := range raw {
		xys[i] = plotter.XY{X: raw[i].X, Y: sm[i]}
	}
	return chart.Line{Name: name, XYs: xys, Band: &[2][]float64{lo, hi}}
}

// plotPanels builds one panel per group with the run's policies, in the group's order, and a
// last panel for policies no group names; the panels share x and y ranges.
func plotPanels(policies []string, curves map[string]Curve, x, y string, line func(string, Curve) chart.Line, zero bool) []chart.Panel {
	var panels []chart.Panel
	named := map[string]bool{}
	for _, g := range PlotGroups {
		pn := chart.Panel{Title: g.Title, X: x, Y: y, Legend: true}
		for _, name := range g.Policies {
			named[name] = true
			if c, ok := curves[name]; ok && slices.Contains(policies, name) {
				pn.Lines = append(pn.Lines, styled(line(name, c), name, len(pn.Lines)))
			}
		}
		if len(pn.Lines) > 0 {
			panels = append(panels, pn)
		}
	}
	other := chart.Panel{Title: "other policies", X: x, Y: y, Legend: true}
	for _, name := range policies {
		if c, ok := curves[name]; ok && !named[name] {
			other.Lines = append(other.Lines, styled(line(name, c), name, len(other.Lines)))
		}
	}
	if len(other.Lines) > 0 {
		panels = append(panels, other)
	}
	shareRanges(panels, zero)
	return panels
}

// styled gives a line its policy's style, or the i-th palette colour for a policy without one.
func styled(l chart.Line, name string, i int) chart.Line {
	st, ok := PolicyStyles[name]
	if !ok {
		st = chart.Style{Color: chart.Palette[i%len(chart.Palette)],
			Dashes: [][]vg.Length{chart.Solid, chart.Dashed, chart.DashDot}[i/len(chart.Palette)%3]}
	}
	l.Style = st
	return l
}

// shareRanges sets every panel's axes to the range of all their lines (and bands), so that
// panels compare at a glance; zero starts the y axis at 0.
func shareRanges(panels []chart.Panel, zero bool) {
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, pn := range panels {
		for _, l := range pn.Lines {
			for i, xy := range l.XYs {
				xlo, xhi = min(xlo, xy.X), max(xhi, xy.X)
				ylo, yhi = min(ylo, xy.Y), max(yhi, xy.Y)
				if l.Band != nil {
					ylo, yhi = min(ylo, l.Band[0][i]), max(yhi, l.Band[1][i])
				}
			}
		}
	}
	if math.IsInf(xlo, 0) {
		return
	}
	if zero {
		ylo = 0
	}
	pad := (yhi - ylo) * 0.03
	for i := range panels {
		panels[i].XMin, panels[i].XMax = xlo, xhi
		panels[i].YMin, panels[i].YMax = max(0, ylo-pad), yhi+pad
		if zero {
			panels[i].YMin = 0
		}
	}
}

// series pairs xs (the index when nil) with ys from index from on.
func series(xs, ys []float64, from int) plotter.XYs {
	out := make(plotter.XYs, 0, len(ys)-from)
	for i := from; i < len(ys); i++ {
		x := float64(i)
		if xs != nil {
			x = xs[i]
		}
		out = append(out, plotter.XY{X: x, Y: ys[i]})
	}
	return out
}
