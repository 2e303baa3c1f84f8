package sim

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// Channel is how a pick came to be chosen, for calibration: the channels predict
// differently (a task never tried leans on its prior, a re-chosen one on its own evidence).
type Channel int

// The channels, exclusive: a random slot whatever the task's history, else never tried or
// re-chosen by whether the task had rollouts when it was picked.
const (
	ChannelNew Channel = iota
	ChannelRechosen
	ChannelRandom
	numChannels
)

// String names the channel as tables show it.
func (c Channel) String() string {
	return [...]string{"never tried", "re-chosen", "random slot"}[c]
}

// earlySteps is the end of the early phase (the weak phase of a graph predictor: few
// rollouts yet), which calibration reports apart.
const earlySteps = 10

// CalibCell sums the picks of one channel in one phase: groups, Σ predicted chance of a
// degenerate group, and how many were degenerate.
type CalibCell struct {
	Groups     int64   `json:"groups"`
	Predicted  float64 `json:"predicted"`
	Degenerate int64   `json:"degenerate"`
}

func (c *CalibCell) add(o CalibCell) {
	c.Groups += o.Groups
	c.Predicted += o.Predicted
	c.Degenerate += o.Degenerate
}

// Gap is the mean predicted minus the realised degenerate share (NaN without groups).
func (c CalibCell) Gap() float64 { return c.PredictedMean() - c.Realised() }

// PredictedMean is the mean predicted chance of a degenerate group.
func (c CalibCell) PredictedMean() float64 { return ratioOf(c.Predicted, float64(c.Groups)) }

// Realised is the share of the groups that were degenerate.
func (c CalibCell) Realised() float64 { return ratioOf(float64(c.Degenerate), float64(c.Groups)) }

func ratioOf(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// Calibration is a run's calibration, by phase (0: steps 1 to 10, 1: the steps after) and
// channel.
type Calibration [2][numChannels]CalibCell

func (c *Calibration) add(o *Calibration) {
	for ph := range c {
		for ch := range c[ph] {
			c[ph][ch].add(o[ph][ch])
		}
	}
}

// Calibrated is a Policy that predicts, for each task it picks, the chance that its group
// comes back degenerate; the runner keeps its Calibration in the Trace.
type Calibrated interface {
	Calibration() *Calibration
}

// calibPick is what a calibrated policy remembers of one pick until its group is observed.
type calibPick struct {
	ch   Channel
	pdeg float64
}

// calibRecorder matches picks to their groups.
type calibRecorder struct {
	cal     Calibration
	pending map[int]calibPick // by world task index, picks of the current step
}

func (r *calibRecorder) pick(task int, ch Channel, pdeg float64) {
	if r.pending == nil {
		r.pending = map[int]calibPick{}
	}
	r.pending[task] = calibPick{ch: ch, pdeg: pdeg}
}

// observe counts the step's groups against their picks and forgets the picks.
func (r *calibRecorder) observe(step int, groups []Group) {
	ph := 0
	if step > earlySteps {
		ph = 1
	}
	for _, g := range groups {
		pk, ok := r.pending[g.Task]
		if !ok {
			continue
		}
		c := &r.cal[ph][pk.ch]
		c.Groups++
		c.Predicted += pk.pdeg
		if g.Degenerate() {
			c.Degenerate++
		}
	}
	clear(r.pending)
}

// PolicyCalibration is a policy's calibration pooled over seeds.
type PolicyCalibration struct {
	Policy string      `json:"policy"`
	Cells  Calibration `json:"cells"` // [phase][channel]
}

// poolCalibration sums the calibrations of a policy's traces; false when it has none.
func poolCalibration(trs []Trace) (Calibration, bool) {
	var sum Calibration
	found := false
	for _, t := range trs {
		if t.Calib != nil {
			sum.add(t.Calib)
			found = true
		}
	}
	return sum, found
}

// WriteCalibration prints, per calibrated policy and channel, the mean predicted chance of a
// degenerate group against the realised share, in steps 1-10 and after, pooled over seeds.
func WriteCalibration(w io.Writer, res Result) error {
	if len(res.Summary.Calibration) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\ncalibration: mean predicted / realised degenerate share (|gap|, groups), pooled over seeds\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "policy\tchannel\tsteps 1-%d\tsteps %d-%d\t\n", earlySteps, earlySteps+1, res.Config.Steps)
	for _, pc := range res.Summary.Calibration {
		for ch := range numChannels {
			row := []string{pc.Policy, ch.String()}
			for ph := range 2 {
				c := pc.Cells[ph][ch]
				row = append(row, fmt.Sprintf("%s / %s (%s, %d)", num(c.PredictedMean(), 3), num(c.Realised(), 3),
					num(math.Abs(c.Gap()), 3), c.Groups))
			}
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
	}
	return tw.Flush()
}
