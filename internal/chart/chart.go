// Package chart draws the figures of envsched's reports (package sim's plots and package
// report's) the way a paper would show them: small multiples, a legend beside each panel and
// never over its data, tick labels at round values, distinct colours and dash patterns, and
// smoothed lines over a faint band of the raw values.
package chart

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Style is how one line is drawn.
type Style struct {
	Color  color.RGBA
	Dashes []vg.Length // nil is solid
	Width  vg.Length   // 0 is 1.3 points
}

// Dash patterns, distinct at a glance.
var (
	Solid    []vg.Length
	Dashed   = []vg.Length{vg.Points(6), vg.Points(3)}
	Dotted   = []vg.Length{vg.Points(1.5), vg.Points(2.5)}
	DashDot  = []vg.Length{vg.Points(6), vg.Points(2.5), vg.Points(1.5), vg.Points(2.5)}
	LongDash = []vg.Length{vg.Points(11), vg.Points(3.5)}
)

// Okabe and Ito's colour-blind-safe palette (yellow darkened to read on white), then grey.
var (
	Black     = color.RGBA{0, 0, 0, 255}
	Orange    = color.RGBA{230, 159, 0, 255}
	SkyBlue   = color.RGBA{86, 180, 233, 255}
	Green     = color.RGBA{0, 158, 115, 255}
	Yellow    = color.RGBA{190, 170, 0, 255}
	Blue      = color.RGBA{0, 114, 178, 255}
	Vermilion = color.RGBA{213, 94, 0, 255}
	Purple    = color.RGBA{204, 121, 167, 255}
	Brown     = color.RGBA{140, 86, 75, 255}
	Grey      = color.RGBA{128, 128, 128, 255}
	LightGrey = color.RGBA{200, 200, 200, 255}
)

// Palette is the order colours are handed out in when a caller has no fixed style per name.
var Palette = []color.RGBA{Blue, Orange, Green, Vermilion, Purple, SkyBlue, Yellow, Grey}

// Line is one series of a panel. Band, when set, is drawn first as a translucent area of the
// line's colour between Band[0] (lower) and Band[1] (upper), on the line's x values.
type Line struct {
	Name  string
	XYs   plotter.XYs
	Style Style
	Band  *[2][]float64
	Fill  bool // draw the area under the line (a stacked band) instead of a line
	Base  []float64
}

// Panel is one plot of a figure.
type Panel struct {
	Title      string
	X, Y       string
	Lines      []Line
	YMin, YMax float64 // both 0: from the data
	XMin, XMax float64 // both 0: from the data
	Legend     bool    // draw a legend beside the panel
	Small      bool    // smaller type, for small multiples
}

// Figure is panels in a grid, each with its legend to its right.
type Figure struct {
	Title       string
	Cols        int
	PanelWidth  vg.Length // the plot area and its axes
	PanelHeight vg.Length
	LegendWidth vg.Length // 0: no legend column
}

// PNG renders the panels into a PNG image.
func (f Figure) PNG(panels []Panel) ([]byte, error) {
	cols := max(1, f.Cols)
	rows := (len(panels) + cols - 1) / cols
	titleH := vg.Length(0)
	if f.Title != "" {
		titleH = vg.Points(22)
	}
	w := vg.Length(cols) * (f.PanelWidth + f.LegendWidth)
	h := vg.Length(rows)*f.PanelHeight + titleH
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(96))
	dc := draw.New(c)
	if f.Title != "" {
		sty := textStyle(13)
		dc.FillText(sty, vg.Point{X: w / 2, Y: h - titleH/2}, f.Title)
	}
	for i, pn := range panels {
		col, row := i%cols, i/cols
		x0 := vg.Length(col) * (f.PanelWidth + f.LegendWidth)
		y1 := h - titleH - vg.Length(row)*f.PanelHeight
		area := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x0, Y: y1 - f.PanelHeight}, Max: vg.Point{X: x0 + f.PanelWidth, Y: y1}}}
		p, leg, err := pn.plot()
		if err != nil {
			return nil, fmt.Errorf("panel %q: %w", pn.Title, err)
		}
		p.Draw(area)
		if pn.Legend && f.LegendWidth > 0 {
			legArea := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x0 + f.PanelWidth + vg.Points(4), Y: y1 - f.PanelHeight},
				Max: vg.Point{X: x0 + f.PanelWidth + f.LegendWidth, Y: y1 - vg.Points(18)}}}
			leg.Draw(legArea)
		}
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("encode png: %w", err)
	}
	return buf.Bytes(), nil
}

func textStyle(size float64) draw.TextStyle {
	return draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, vg.Points(size)),
		Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YCenter}
}

// plot builds the panel's plot and its legend.
func (pn Panel) plot() (*plot.Plot, plot.Legend, error) {
	p := plot.New()
	p.Title.Text = pn.Title
	p.X.Label.Text, p.Y.Label.Text = pn.X, pn.Y
	p.X.Tick.Marker, p.Y.Tick.Marker = RoundTicks{}, RoundTicks{}
	if pn.Small {
		p.Title.TextStyle.Font.Size = vg.Points(9.5)
		for _, a := range []*plot.Axis{&p.X, &p.Y} {
			a.Label.TextStyle.Font.Size = vg.Points(8)
			a.Tick.Label.Font.Size = vg.Points(7.5)
		}
		p.Title.Padding = vg.Points(2)
	}
	p.Add(&plotter.Grid{Vertical: draw.LineStyle{Color: color.Gray{235}, Width: vg.Points(0.5)},
		Horizontal: draw.LineStyle{Color: color.Gray{235}, Width: vg.Points(0.5)}})
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	leg.ThumbnailWidth = vg.Points(26)
	for _, l := range pn.Lines {
		if err := addLine(p, &leg, l); err != nil {
			return nil, leg, err
		}
	}
	if pn.YMin != 0 || pn.YMax != 0 {
		p.Y.Min, p.Y.Max = pn.YMin, pn.YMax
	}
	if pn.XMin != 0 || pn.XMax != 0 {
		p.X.Min, p.X.Max = pn.XMin, pn.XMax
	}
	return p, leg, nil
}

func addLine(p *plot.Plot, leg *plot.Legend, l Line) error {
	if len(l.XYs) == 0 {
		return nil
	}
	if l.Fill {
		return addFill(p, leg, l)
	}
	if l.Band != nil {
		poly, err := plotter.NewPolygon(bandXYs(l.XYs, l.Band[0], l.Band[1]))
		if err != nil {
			return err
		}
		c := l.Style.Color
		poly.Color = color.NRGBA{c.R, c.G, c.B, 28}
		poly.LineStyle.Width = 0
		p.Add(poly)
	}
	line, err := plotter.NewLine(l.XYs)
	if err != nil {
		return err
	}
	line.Color, line.Dashes, line.Width = l.Style.Color, l.Style.Dashes, l.Style.Width
	if line.Width == 0 {
		line.Width = vg.Points(1.3)
	}
	p.Add(line)
	leg.Add(l.Name, line)
	return nil
}

// addFill draws the area between Base (0 when nil) and the line, for stacked bands.
func addFill(p *plot.Plot, leg *plot.Legend, l Line) error {
	base := l.Base
	if base == nil {
		base = make([]float64, len(l.XYs))
	}
	upper := make([]float64, len(l.XYs))
	for i, xy := range l.XYs {
		upper[i] = xy.Y
	}
	poly, err := plotter.NewPolygon(bandXYs(l.XYs, base, upper))
	if err != nil {
		return err
	}
	poly.Color = l.Style.Color
	poly.LineStyle.Width = 0
	p.Add(poly)
	leg.Add(l.Name, poly)
	return nil
}

// bandXYs is the polygon between lo and hi on xs' x values.
func bandXYs(xs plotter.XYs, lo, hi []float64) plotter.XYs {
	out := make(plotter.XYs, 0, 2*len(xs))
	for i, xy := range xs {
		out = append(out, plotter.XY{X: xy.X, Y: hi[i]})
	}
	for i := len(xs) - 1; i >= 0; i-- {
		out = append(out, plotter.XY{X: xs[i].X, Y: lo[i]})
	}
	return out
}

// RoundTicks puts labelled ticks at round values: multiples of 1, 2 or 5 times a power of ten,
// 4 to 8 of them over the axis, labelled without trailing zeros; unlabelled minor ticks halve
// the step.
type RoundTicks struct{}

// Ticks returns the ticks of [lo, hi].
func (RoundTicks) Ticks(lo, hi float64) []plot.Tick {
	step := RoundStep(lo, hi)
	if step == 0 {
		return []plot.Tick{{Value: lo, Label: label(lo, 1)}}
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step*2) * step / 2; v <= hi+step*1e-9; v += step / 2 {
		v = math.Round(v/step*2) * step / 2
		t := plot.Tick{Value: v}
		if math.Abs(math.Remainder(v, step)) < step*1e-6 {
			t.Label = label(v, step)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// RoundStep is the step of RoundTicks over [lo, hi]: the smallest of 1, 2, 5 × 10^k that gives
// at most 7 intervals; 0 for an empty range.
func RoundStep(lo, hi float64) float64 {
	span := hi - lo
	if !(span > 0) || math.IsInf(span, 0) {
		return 0
	}
	pow := math.Pow(10, math.Floor(math.Log10(span/7)))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(m*pow) <= 7 {
			return m * pow
		}
	}
	return 10 * pow
}

// label writes v with as many decimals as step needs, no trailing zeros ("0.2", "40", "1500").
func label(v, step float64) string {
	if math.Abs(v) < step*1e-9 {
		v = 0
	}
	dec := 0
	if step < 1 {
		dec = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// Smooth is the centred moving average of ys over 2·half+1 points (fewer at the ends).
func Smooth(ys []float64, half int) []float64 {
	out := make([]float64, len(ys))
	for i := range ys {
		lo, hi := max(0, i-half), min(len(ys)-1, i+half)
		s := 0.0
		for _, y := range ys[lo : hi+1] {
			s += y
		}
		out[i] = s / float64(hi-lo+1)
	}
	return out
}

// Envelope is the lowest and highest of ys in the same windows as Smooth: the band of the raw
// values a smoothed line summarises.
func Envelope(ys []float64, half int) (lo, hi []float64) {
	lo, hi = make([]float64, len(ys)), make([]float64, len(ys))
	for i := range ys {
		a, b := max(0, i-half), min(len(ys)-1, i+half)
		lo[i], hi[i] = ys[a], ys[a]
		for _, y := range ys[a : b+1] {
			lo[i], hi[i] = min(lo[i], y), max(hi[i], y)
		}
	}
	return lo, hi
}
