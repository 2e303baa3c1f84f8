package sim

import (
	"fmt"
	"io"
	"math"
	"os"
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

// Calibration is a run's calibration, by phase (0: steps 1 to 10, 1: the steps after, 2: step
// 1 alone, the first request, which phase 0 counts too) and channel. The first request is
// shown apart because nothing is measured before it: its predictions are the prior's alone.
type Calibration [3][numChannels]CalibCell

// phaseFirst is the row of Calibration of the first request's picks.
const phaseFirst = 2

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

// RetryCalibration splits selection's re-tries (picks of tasks rolled out before, not random
// slots) after the early phase by the task's history: [0] every group so far all-equal
// ("stuck"), [1] some group unequal; then by the rounds since its evidence, 1, 2-3, 4-7, 8 or
// more (retryAgeBucket). Rows [2] and [3] hold selection's picks of tasks never tried after
// the early phase, in column 0: [2] predicted from their environment's prior alone, [3] with
// evidence borrowed from neighbours (a count of one rollout or more: batcher's reason
// "never tried; neighbours' evidence"), which lean on the graph's edges.
type RetryCalibration [4][4]CalibCell

// Rows of RetryCalibration for selection's picks of tasks never tried.
const (
	untriedPrior    = 2
	untriedBorrowed = 3
)

func (c *RetryCalibration) add(o *RetryCalibration) {
	for s := range c {
		for a := range c[s] {
			c[s][a].add(o[s][a])
		}
	}
}

// retryAgeBucket is the age bucket of RetryCalibration for evidence age rounds old.
func retryAgeBucket(age int64) int {
	switch {
	case age <= 1:
		return 0
	case age <= 3:
		return 1
	case age <= 7:
		return 2
	}
	return 3
}

// StepCalibration is the early phase's calibration step by step ([step−1][channel]): a
// diagnostic, printed only when the environment variable ENVSCHED_SIM_STEPS is set (the
// pooled steps 1-10 cell hides which step is off).
type StepCalibration [earlySteps][numChannels]CalibCell

func (c *StepCalibration) add(o *StepCalibration) {
	for s := range c {
		for ch := range c[s] {
			c[s][ch].add(o[s][ch])
		}
	}
}

// StepCalibrated is a Calibrated policy that also keeps its early steps apart.
type StepCalibrated interface {
	StepCalibration() *StepCalibration
}

// calibPick is what a calibrated policy remembers of one pick until its group is observed.
type calibPick struct {
	ch   Channel
	pdeg float64
	// retry is 1 + the RetryCalibration row of a re-try (0: not a re-try), age its bucket
	retry, age int
}

// calibRecorder matches picks to their groups.
type calibRecorder struct {
	cal     Calibration
	retry   RetryCalibration
	steps   StepCalibration
	pending map[int]calibPick // by world task index, picks of the current step
}

func (r *calibRecorder) pick(task int, ch Channel, pdeg float64) {
	r.pickRetry(task, ch, pdeg, 0, 0)
}

// pickRetry is pick with the re-try's RetryCalibration row + 1 (0: not a re-try) and age.
func (r *calibRecorder) pickRetry(task int, ch Channel, pdeg float64, retry int, age int64) {
	if r.pending == nil {
		r.pending = map[int]calibPick{}
	}
	r.pending[task] = calibPick{ch: ch, pdeg: pdeg, retry: retry, age: retryAgeBucket(age)}
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
		cells := []*CalibCell{&r.cal[ph][pk.ch]}
		if step == 1 {
			cells = append(cells, &r.cal[phaseFirst][pk.ch])
		}
		if step >= 1 && step <= earlySteps {
			cells = append(cells, &r.steps[step-1][pk.ch])
		}
		for _, c := range cells {
			c.Groups++
			c.Predicted += pk.pdeg
			if g.Degenerate() {
				c.Degenerate++
			}
		}
		if pk.retry > 0 && ph == 1 {
			rc := &r.retry[pk.retry-1][pk.age]
			rc.Groups++
			rc.Predicted += pk.pdeg
			if g.Degenerate() {
				rc.Degenerate++
			}
		}
	}
	clear(r.pending)
}

// PolicyCalibration is a policy's calibration pooled over seeds.
type PolicyCalibration struct {
	Policy string      `json:"policy"`
	Cells  Calibration `json:"cells"` // [phase][channel]
	// Retries are the re-tries after the early phase by history and age (printed only)
	Retries *RetryCalibration `json:"-"`
	// Steps are the early steps apart (printed only with ENVSCHED_SIM_STEPS set)
	Steps *StepCalibration `json:"-"`
}

// RetryCalibrated is a Calibrated policy that also splits its re-tries (RetryCalibration).
type RetryCalibrated interface {
	RetryCalibration() *RetryCalibration
}

// poolRetries sums the re-try calibrations of a policy's traces; nil when it has none.
func poolRetries(trs []Trace) *RetryCalibration {
	var sum *RetryCalibration
	for _, t := range trs {
		if t.Retry != nil {
			if sum == nil {
				sum = &RetryCalibration{}
			}
			sum.add(t.Retry)
		}
	}
	return sum
}

// poolSteps sums the step calibrations of a policy's traces; nil when it has none.
func poolSteps(trs []Trace) *StepCalibration {
	var sum *StepCalibration
	for _, t := range trs {
		if t.Steps != nil {
			if sum == nil {
				sum = &StepCalibration{}
			}
			sum.add(t.Steps)
		}
	}
	return sum
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
	if err := tw.Flush(); err != nil {
		return err
	}
	writeFirst(w, res)
	if os.Getenv("ENVSCHED_SIM_STEPS") != "" {
		if err := writeSteps(w, res); err != nil {
			return err
		}
	}
	return writeRetries(w, res)
}

// writeFirst prints the first request's picks (step 1, predicted from the prior alone) per
// policy and channel that had any.
func writeFirst(w io.Writer, res Result) {
	for _, pc := range res.Summary.Calibration {
		var parts []string
		for ch := range numChannels {
			if c := pc.Cells[phaseFirst][ch]; c.Groups > 0 {
				parts = append(parts, fmt.Sprintf("%s %s / %s (%s, %d)", ch, num(c.PredictedMean(), 3),
					num(c.Realised(), 3), num(math.Abs(c.Gap()), 3), c.Groups))
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "first request (step 1, the prior alone), %s: %s\n", pc.Policy, strings.Join(parts, "; "))
		}
	}
}

// writeSteps prints the early phase step by step (a diagnostic: ENVSCHED_SIM_STEPS).
func writeSteps(w io.Writer, res Result) error {
	fmt.Fprintf(w, "\nsteps 1-%d one by one: mean predicted / realised degenerate share (groups)\n", earlySteps)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "policy\tstep\tnever tried\tre-chosen\trandom slot\t\n")
	for _, pc := range res.Summary.Calibration {
		if pc.Steps == nil {
			continue
		}
		for s := range pc.Steps {
			row := []string{pc.Policy, fmt.Sprint(s + 1)}
			for ch := range numChannels {
				c := pc.Steps[s][ch]
				row = append(row, fmt.Sprintf("%s / %s (%d)", num(c.PredictedMean(), 3), num(c.Realised(), 3), c.Groups))
			}
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
	}
	return tw.Flush()
}

// writeRetries prints the re-tries after the early phase by history and evidence age.
func writeRetries(w io.Writer, res Result) error {
	fmt.Fprintf(w, "\nselection's re-tries after step %d: mean predicted / realised degenerate share (groups), by history and evidence age\n", earlySteps)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "policy\thistory\tage 1\tage 2-3\tage 4-7\tage 8+\tall\t\n")
	for _, pc := range res.Summary.Calibration {
		if pc.Retries == nil {
			continue
		}
		for s, name := range []string{"all groups all-equal", "some group unequal"} {
			row := []string{pc.Policy, name}
			var all CalibCell
			for a := range pc.Retries[s] {
				c := pc.Retries[s][a]
				all.add(c)
				row = append(row, fmt.Sprintf("%s / %s (%d)", num(c.PredictedMean(), 3), num(c.Realised(), 3), c.Groups))
			}
			row = append(row, fmt.Sprintf("%s / %s (%d)", num(all.PredictedMean(), 3), num(all.Realised(), 3), all.Groups))
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, pc := range res.Summary.Calibration {
		if pc.Retries == nil {
			continue
		}
		var parts []string
		for _, r := range []struct {
			row  int
			name string
		}{{untriedPrior, "env prior"}, {untriedBorrowed, "neighbours' evidence"}} {
			c := pc.Retries[r.row][0]
			parts = append(parts, fmt.Sprintf("%s %s / %s (%d)", r.name, num(c.PredictedMean(), 3), num(c.Realised(), 3), c.Groups))
		}
		fmt.Fprintf(w, "selection's picks of tasks never tried after step %d, %s: %s\n", earlySteps, pc.Policy, strings.Join(parts, "; "))
	}
	return nil
}
