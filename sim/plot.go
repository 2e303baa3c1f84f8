package sim

import (
	"fmt"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Plot file names written by WritePlots.
const (
	PlotScoreByStep     = "heldout_by_step.png"
	PlotScoreByRollouts = "heldout_by_rollouts.png"
	PlotDegenerate      = "degenerate_by_step.png"
)

// WritePlots writes three PNG plots into dir, one line per policy (medians across seeds):
// held-out score against steps, held-out score against rollouts spent, and the share of
// degenerate groups per step. It returns the paths written.
func WritePlots(dir string, res Result) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	curves := res.Curves()
	title := fmt.Sprintf("scenario %s, %d seeds, B=%d, G=%d", res.Config.Scenario.Name, res.Config.Seeds,
		res.Config.BatchSize, res.Config.GroupSize)
	specs := []struct {
		file, y, x string
		top        bool // legend at the top (where the curves are not)
		xy         func(c Curve) plotter.XYs
	}{
		{PlotScoreByStep, "held-out score", "training step", false, func(c Curve) plotter.XYs { return series(nil, c.Score, 0) }},
		{PlotScoreByRollouts, "held-out score", "rollouts spent", false, func(c Curve) plotter.XYs { return series(c.Rollouts, c.Score, 0) }},
		{PlotDegenerate, "share of degenerate groups", "training step", true, func(c Curve) plotter.XYs { return series(nil, c.Degenerate, 1) }},
	}
	var paths []string
	for _, sp := range specs {
		path := filepath.Join(dir, sp.file)
		if err := linePlot(path, title, sp.x, sp.y, sp.top, res.Config.Policies, curves, sp.xy); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
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

func linePlot(path, title, x, y string, legendTop bool, order []string, curves map[string]Curve, xy func(Curve) plotter.XYs) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = x, y
	p.Legend.Top, p.Legend.Left = legendTop, false
	for i, name := range order {
		c, ok := curves[name]
		if !ok {
			continue
		}
		l, err := plotter.NewLine(xy(c))
		if err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i / 7)
		l.Width = vg.Points(1.2)
		if name == "envsched" {
			l.Width = vg.Points(2.5)
		}
		p.Add(l)
		p.Legend.Add(name, l)
	}
	if err := p.Save(9*vg.Inch, 6*vg.Inch, path); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return nil
}
