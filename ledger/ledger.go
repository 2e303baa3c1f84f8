// Package ledger is envsched's measurement of its own calibration: the pure rules that turn a
// stored answer's predictions and the rollouts that follow it into a ledger of predicted
// against realised outcomes. Storage keeps the ledger in the transactions that store answers
// and rollouts; status, stats, report and metrics read it.
//
// Every chosen task of an answer (with a group size of two or more) opens a Pending
// prediction. The rollouts of that task which answer it (see Pending.Matches) fill its group;
// when the group has GroupSize rollouts it closes into an Outcome, which is counted once into
// a Cell per environment and channel, a reliability Bin and the answer's own Cell. A group
// that never completes is counted as expired when a later answer pushes it out (see MaxOpen),
// never as measured.
package ledger

import "math"

// Channel is how a task came into an answer. The channels are measured apart because their
// predictions rest on different evidence.
type Channel uint8

// Channels.
const (
	Untried  Channel = iota // never rolled out before the answer that chose it
	Rechosen                // rolled out before
	Random                  // drawn into a random slot (whatever its history)
	NumChannels
)

// String is the channel's name in files and metrics.
func (c Channel) String() string {
	switch c {
	case Untried:
		return "never_tried"
	case Rechosen:
		return "rechosen"
	case Random:
		return "random_slot"
	}
	return "unknown"
}

// ChannelOf is the channel of a task chosen (in a random slot when random) whose task had
// been rolled out tried times before the answer.
func ChannelOf(random bool, tried int64) Channel {
	switch {
	case random:
		return Random
	case tried > 0:
		return Rechosen
	}
	return Untried
}

// Bins is the number of reliability bins: predicted p_degenerate in [k/Bins, (k+1)/Bins).
const Bins = 10

// BinOf is the reliability bin of a predicted p_degenerate (clamped into [0, 1]).
func BinOf(p float64) int {
	if !(p > 0) {
		return 0
	}
	return min(int(p*Bins), Bins-1)
}

// MaxOpen is how many predictions of one task may wait for their groups: when an answer
// opens one more, the oldest is expired. A trainer whose rollouts lag its requests by up to
// MaxOpen−1 answers is measured in full.
const MaxOpen = 4

// Prediction is what an answer predicted for one chosen task, as written in the answer.
type Prediction struct {
	Env, Task   string
	Rank        int     // 1, 2, … in the answer
	PDegenerate float64 // chance that the group is all-equal
	Mean        float64 // predicted mean reward, normalised into [0, 1]
	Random      bool    // chosen in a random slot
}

// Pending is one prediction waiting for its group, with the group so far (rewards normalised
// into [0, 1]).
type Pending struct {
	Answer      uint64 // the answer's order (1, 2, …: requests answered when it was stored)
	Request     string // the answer's request ID
	Step        int64  // the answer's step
	Rank        int
	Channel     Channel
	GroupSize   int
	PDegenerate float64
	Mean        float64
	N           int64
	Min, Max    float64
	Sum         float64
	// Group is the group key of the group's first rollout: the later ones must have the same
	// (a step replayed under new group keys after a crash does not mix into a group begun
	// before it; two groups of one task in one answer fill its two predictions apart)
	Group string
}

// Matches reports whether a rollout with group key group answers p: it must be of p's batch
// (SameBatch) and, once p's group has begun, of the same group key.
func (p Pending) Matches(request string, step int64, hasStep bool, group string) bool {
	return (p.N == 0 || group == p.Group) && p.SameBatch(request, step, hasStep)
}

// SameBatch reports whether a rollout names p's batch: one that names a request answers the
// prediction of that request; one that names no request but has a step answers the prediction
// of that step; one with neither answers any (the caller offers it to the oldest open
// prediction of its task first).
func (p Pending) SameBatch(request string, step int64, hasStep bool) bool {
	switch {
	case request != "":
		return request == p.Request
	case hasStep:
		return step == p.Step
	}
	return true
}

// Restart forgets the unfinished group of p: a rollout of p's batch under a new group key, that
// no other prediction takes, begins the group again (a step replayed after a crash).
func (p *Pending) Restart() {
	p.N, p.Min, p.Max, p.Sum, p.Group = 0, 0, 0, 0, ""
}

// Add counts one rollout of normalised reward r and group key group into p's group and
// reports whether the group is now complete.
func (p *Pending) Add(r float64, group string) bool {
	if p.N == 0 {
		p.Group = group
	}
	if p.N == 0 || r < p.Min {
		p.Min = r
	}
	if p.N == 0 || r > p.Max {
		p.Max = r
	}
	p.N++
	p.Sum += r
	return p.N >= int64(p.GroupSize)
}

// Outcome is the measurement of a completed group.
func (p Pending) Outcome() Outcome {
	return Outcome{Channel: p.Channel, PDegenerate: p.PDegenerate, Mean: p.Mean,
		Degenerate: p.N >= 2 && p.Min == p.Max, Realised: p.Sum / float64(max(p.N, 1)), Rollouts: p.N}
}

// Outcome is one measured group: what was predicted and what came.
type Outcome struct {
	Channel     Channel
	PDegenerate float64
	Mean        float64
	Degenerate  bool    // every reward of the group was equal
	Realised    float64 // the group's mean reward
	Rollouts    int64
}

// Cell sums the outcomes of some groups.
type Cell struct {
	Groups         int64   // groups measured
	Degenerate     int64   // of those, all-equal
	PredDegenerate float64 // Σ predicted p_degenerate
	PredMean       float64 // Σ predicted mean
	RealMean       float64 // Σ realised group mean
	Rollouts       int64   // rollouts in the measured groups
}

// Add counts o into c.
func (c *Cell) Add(o Outcome) {
	c.Groups++
	if o.Degenerate {
		c.Degenerate++
	}
	c.PredDegenerate += o.PDegenerate
	c.PredMean += o.Mean
	c.RealMean += o.Realised
	c.Rollouts += o.Rollouts
}

// Merge adds d's sums to c.
func (c *Cell) Merge(d Cell) {
	c.Groups += d.Groups
	c.Degenerate += d.Degenerate
	c.PredDegenerate += d.PredDegenerate
	c.PredMean += d.PredMean
	c.RealMean += d.RealMean
	c.Rollouts += d.Rollouts
}

// Shares returns the mean predicted and the realised degenerate share, and the mean
// predicted and realised reward; all 0 when c has no groups.
func (c Cell) Shares() (predDeg, realDeg, predMean, realMean float64) {
	if c.Groups == 0 {
		return 0, 0, 0, 0
	}
	n := float64(c.Groups)
	return c.PredDegenerate / n, float64(c.Degenerate) / n, c.PredMean / n, c.RealMean / n
}

// Gap is the realised minus the mean predicted degenerate share (positive: more groups came
// back all-equal than predicted); 0 when c has no groups.
func (c Cell) Gap() float64 {
	p, r, _, _ := c.Shares()
	return r - p
}

// finite makes a non-finite prediction 0 so that sums stay finite.
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// Open returns the pending prediction of pr in an answer, or false when the answer's groups
// are not measured (group size under two: no group can be degenerate).
func Open(pr Prediction, answer uint64, request string, step int64, groupSize int, tried int64) (Pending, bool) {
	if groupSize < 2 {
		return Pending{}, false
	}
	return Pending{Answer: answer, Request: request, Step: step, Rank: pr.Rank,
		Channel: ChannelOf(pr.Random, tried), GroupSize: groupSize,
		PDegenerate: min(max(finite(pr.PDegenerate), 0), 1), Mean: min(max(finite(pr.Mean), 0), 1)}, true
}

// Totals counts the predictions of a ledger.
type Totals struct {
	Opened    int64 // predictions opened (chosen tasks of answers with a group size of two or more)
	Measured  int64 // of those, closed by a complete group
	Expired   int64 // pushed out by a later answer (MaxOpen) before their group was complete
	Unmatched int64 // rollouts of a task with open predictions that answered none of them
	Restarted int64 // unfinished groups begun again under a new group key (a replayed step)
}

// Open is the number of predictions still waiting for their group.
func (t Totals) Open() int64 { return t.Opened - t.Measured - t.Expired }

// AnswerCell is the ledger of one answer: its groups measured so far.
type AnswerCell struct {
	Answer  uint64 // order of the answer (1, 2, …)
	Request string
	Step    int64
	Picks   int64 // predictions opened
	Cell
}

// Ledger is the calibration ledger as stored.
type Ledger struct {
	Totals Totals
	// Cells are the outcomes per environment and channel
	Cells map[string]*[NumChannels]Cell
	// Bins is the reliability table per channel: groups by predicted p_degenerate (BinOf)
	Bins [NumChannels][Bins]Cell
	// Answers are the last answers read with it, oldest first
	Answers []AnswerCell
}

// Overall sums the cells of every environment, per channel.
func (l Ledger) Overall() [NumChannels]Cell {
	var out [NumChannels]Cell
	for _, cells := range l.Cells {
		for ch := range out {
			out[ch].Merge(cells[ch])
		}
	}
	return out
}

// Total sums every measured group.
func (l Ledger) Total() Cell {
	var t Cell
	for _, x := range l.Overall() {
		t.Merge(x)
	}
	return t
}

// Recent sums the groups measured of l.Answers.
func (l Ledger) Recent() Cell {
	var t Cell
	for _, a := range l.Answers {
		t.Merge(a.Cell)
	}
	return t
}

// Reliability sums the bins of every channel.
func (l Ledger) Reliability() [Bins]Cell {
	var out [Bins]Cell
	for ch := range l.Bins {
		for b := range out {
			out[b].Merge(l.Bins[ch][b])
		}
	}
	return out
}
