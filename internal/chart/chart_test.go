package chart

import (
	"bytes"
	"fmt"
	"image/png"
	"testing"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// labelled returns the labelled ticks of [lo, hi] as "value:label" strings.
func labelled(lo, hi float64) []string {
	var out []string
	for _, t := range (RoundTicks{}).Ticks(lo, hi) {
		if t.Label != "" {
			out = append(out, t.Label)
		}
	}
	return out
}

func TestRoundTicksAreRound(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{0.36, 0.6, "[0.40 0.45 0.50 0.55 0.60]"}, // the 0.36/0.48/0.6
		{4, 28, "[5 10 15 20 25]"},                // the steps 4/16/28
		{0, 1, "[0.0 0.2 0.4 0.6 0.8 1.0]"},
		{1, 120, "[20 40 60 80 100 120]"},
		{0, 61440, "[0 10000 20000 30000 40000 50000 60000]"},
		{-0.05, 0.05, "[-0.04 -0.02 0.00 0.02 0.04]"},
	} {
		if got := fmt.Sprint(labelled(tc.lo, tc.hi)); got != tc.want {
			t.Errorf("ticks of [%g, %g]: %s, want %s", tc.lo, tc.hi, got, tc.want)
		}
	}
	if got := (RoundTicks{}).Ticks(3, 3); len(got) != 1 || got[0].Label != "3" {
		t.Errorf("ticks of an empty range: %+v", got)
	}
}

func TestSmoothAndEnvelope(t *testing.T) {
	ys := []float64{0, 10, 0, 10, 0}
	if got := fmt.Sprint(Smooth(ys, 1)); got != "[5 3.3333333333333335 6.666666666666667 3.3333333333333335 5]" {
		t.Errorf("Smooth: %s", got)
	}
	lo, hi := Envelope([]float64{3, 1, 4, 1, 5}, 1)
	if fmt.Sprint(lo, hi) != "[1 1 1 1 1] [3 4 4 5 5]" {
		t.Errorf("Envelope: %v %v", lo, hi)
	}
}

// TestFigureLegendBesideThePanel: a figure with a legend column is that much wider than its
// panels, so the legend never lies over the data.
func TestFigureLegendBesideThePanel(t *testing.T) {
	panel := Panel{Title: "p", X: "x", Y: "y", Legend: true, Lines: []Line{
		{Name: "a", XYs: plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}}, Style: Style{Color: Blue},
			Band: &[2][]float64{{0, 0.5}, {0.5, 1}}},
		{Name: "b", XYs: plotter.XYs{{X: 0, Y: 1}, {X: 1, Y: 0}}, Style: Style{Color: Orange, Dashes: Dashed}}}}
	for _, tc := range []struct {
		legend vg.Length
		cols   int
		n      int
		w, h   int
	}{{0, 1, 1, 384, 288}, {2 * vg.Inch, 1, 1, 576, 288}, {0, 2, 3, 768, 576}} {
		panels := make([]Panel, tc.n)
		for i := range panels {
			panels[i] = panel
		}
		data, err := Figure{Cols: tc.cols, PanelWidth: 4 * vg.Inch, PanelHeight: 3 * vg.Inch, LegendWidth: tc.legend}.PNG(panels)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if b := img.Bounds(); b.Dx() != tc.w || b.Dy() != tc.h {
			t.Errorf("legend %v, %d panels in %d columns: %dx%d, want %dx%d", tc.legend, tc.n, tc.cols, b.Dx(), b.Dy(), tc.w, tc.h)
		}
	}
}
