// Package stats holds the statistics that storage persists per task, per group and per
// environment, and the pure rules that update them. Storage applies them inside the transaction
// that stores the rollouts; propagate and the simulator read them.
//
// Rewards reach this package already clipped and normalised into [0, 1] (the caller maps the
// configured reward range onto it). A round is a training step: a rollout's own step when it has
// one, otherwise the current round of the database.
package stats

import "math"

// DefaultDecay is λ, the factor by which evidence shrinks per round since it was gathered.
const DefaultDecay = 0.9

// Task is the statistics of one task.
type Task struct {
	Rollouts   int64   // rollouts counted
	Sum        float64 // Σ reward
	SumSq      float64 // Σ reward²
	A          float64 // decayed Σ r, as of Round
	B          float64 // decayed Σ (1 − r), as of Round
	WV         float64 // decayed Σ of within-group variances of groups of two or more, as of Round
	WN         float64 // decayed count of those groups, as of Round
	Round      int64   // the round A, B, WV and WN are decayed to
	Groups     int64   // groups of two or more rollouts
	Degenerate int64   // of those, the groups whose rewards are all equal
	LastStep   int64   // highest step seen in a rollout; 0 when none
	Chosen     int64   // times chosen in a batch
	LastChosen int64   // step of the last batch that chose it; 0 when never
}

// Group is the running state of one group of rollouts (one task, one group key).
type Group struct {
	N     int64
	Min   float64
	Max   float64
	Sum   float64
	SumSq float64
	Round int64 // the task round at which the group's variance was last folded into Task.WV
}

// Env is the statistics of one environment: sums over its tasks.
type Env struct {
	Tasks      int64   // tasks known (catalogue or rollouts)
	TasksSeen  int64   // tasks with at least one rollout
	Rollouts   int64   // rollouts counted
	Sum        float64 // Σ reward
	Groups     int64   // groups of two or more rollouts
	Degenerate int64   // of those, degenerate
}

// Mean is the mean reward, 0 when there are no rollouts.
func (t Task) Mean() float64 {
	if t.Rollouts == 0 {
		return 0
	}
	return t.Sum / float64(t.Rollouts)
}

// Evidence returns A and B decayed to round. A round before t.Round leaves them as they are.
func (t Task) Evidence(round int64, lambda float64) (a, b float64) {
	f := decayFactor(t.Round, round, lambda)
	return t.A * f, t.B * f
}

// WithinVar returns WV and WN decayed to round.
func (t Task) WithinVar(round int64, lambda float64) (wv, wn float64) {
	f := decayFactor(t.Round, round, lambda)
	return t.WV * f, t.WN * f
}

func decayFactor(from, to int64, lambda float64) float64 {
	if to <= from {
		return 1
	}
	return math.Pow(lambda, float64(to-from))
}

// decayTo moves the decayed sums forward to round; evidence from a later round than a
// rollout's own is kept as it is (late lines are counted at the newer round).
func (t *Task) decayTo(round int64, lambda float64) {
	if round <= t.Round {
		return
	}
	f := decayFactor(t.Round, round, lambda)
	t.A, t.B, t.WV, t.WN = t.A*f, t.B*f, t.WV*f, t.WN*f
	t.Round = round
}

// Add counts one rollout with normalised reward r in [0, 1] gathered at round, and its step
// when it has one. g is the state of the rollout's group, updated in place.
func (t *Task) Add(r float64, round int64, step int64, hasStep bool, g *Group, lambda float64) {
	t.decayTo(round, lambda)
	t.Rollouts++
	t.Sum += r
	t.SumSq += r * r
	t.A += r
	t.B += 1 - r
	if hasStep && step > t.LastStep {
		t.LastStep = step
	}
	t.addToGroup(g, r, lambda)
}

// addToGroup updates the group and the task's group counts. The group's old variance is taken
// out of WV as decayed since it was folded in (a late rollout of an older group), and the new
// variance is counted at the task's round.
func (t *Task) addToGroup(g *Group, r, lambda float64) {
	wasGroup, wasDegenerate, oldVar := g.N >= 2, g.degenerate(), g.variance()
	g.add(r)
	defer func() { g.Round = t.Round }()
	if wasGroup {
		t.WV += g.variance() - oldVar*decayFactor(g.Round, t.Round, lambda)
		if wasDegenerate && !g.degenerate() {
			t.Degenerate--
		}
	} else if g.N >= 2 {
		t.Groups++
		t.WN++
		t.WV += g.variance()
		if g.degenerate() {
			t.Degenerate++
		}
	}
	if t.WV < 0 {
		t.WV = 0
	}
}

func (g *Group) add(r float64) {
	if g.N == 0 || r < g.Min {
		g.Min = r
	}
	if g.N == 0 || r > g.Max {
		g.Max = r
	}
	g.N++
	g.Sum += r
	g.SumSq += r * r
}

func (g Group) degenerate() bool { return g.N >= 2 && g.Min == g.Max }

// variance is the population variance of the group's rewards.
func (g Group) variance() float64 {
	if g.N < 2 {
		return 0
	}
	m := g.Sum / float64(g.N)
	v := g.SumSq/float64(g.N) - m*m
	if v < 0 {
		return 0
	}
	return v
}

// Apply adds to e the change of one task from before to after; isNew says the task was not
// known before.
func (e *Env) Apply(before, after Task, isNew bool) {
	if isNew {
		e.Tasks++
	}
	if before.Rollouts == 0 && after.Rollouts > 0 {
		e.TasksSeen++
	}
	e.Rollouts += after.Rollouts - before.Rollouts
	e.Sum += after.Sum - before.Sum
	e.Groups += after.Groups - before.Groups
	e.Degenerate += after.Degenerate - before.Degenerate
}

// Mean is the environment's mean reward, 0 when there are no rollouts.
func (e Env) Mean() float64 {
	if e.Rollouts == 0 {
		return 0
	}
	return e.Sum / float64(e.Rollouts)
}
