package propagate

import (
	"math"

	"github.com/envsched/envsched/stats"
)

// Graded rewards (not all 0 or 1: partial credit, a continuous score) tie fewer of a task's
// groups to its mean than the Beta-Binomial model supposes: a task that scores 0.5 every time
// has mean ½, which the model reads as a coin, yet every group it returns is all-equal. For an
// environment with graded rewards propagate therefore measures, over all its tasks with groups
// (graded or not yet: a task that always fails is part of the same population), how far their
// observed share of all-equal groups lies from what 0/1 rewards at each task's mean would give,
// and shifts by that gap in logits the Beta-Binomial chance of the environment's tasks that
// have no groups of their own (gradedSums.offset, taskOffset). Each task counts once, whatever
// its number of groups: an untried task is a draw from the environment's tasks, not from its
// groups, and the tasks with many groups are those chosen again for being informative.
// Environments whose rewards are all 0 or 1 get no offset: their predictions do not change.

// gradedSums are the sums, over the tasks with groups of one environment, that measure the
// offset: their number, the sum of their observed shares of all-equal groups, and the sum of
// the shares that 0/1 rewards at each task's mean would give.
type gradedSums struct{ tasks, observed, model float64 }

// addTask counts one task, if it has groups. The model's group size is the task's own,
// rollouts per group rounded (the groups it was measured on, whatever size is asked later),
// from 2 to 1024.
func (s *gradedSums) addTask(t *stats.Task) {
	if t.Groups == 0 {
		return
	}
	m := clamp01(t.Sum / float64(t.Rollouts))
	n := float64(t.Groups)
	g := int(min(max(math.Round(float64(t.Rollouts)/n), 2), 1024))
	s.tasks++
	s.observed += float64(t.Degenerate) / n
	s.model += pow(m, g) + pow(1-m, g)
}

// pow is x^g for g >= 0 by repeated squaring.
func pow(x float64, g int) float64 {
	r := 1.0
	for ; g > 0; g >>= 1 {
		if g&1 == 1 {
			r *= x
		}
		x *= x
	}
	return r
}

func (s *gradedSums) add(o *gradedSums) {
	s.tasks += o.tasks
	s.observed += o.observed
	s.model += o.model
}

// offset is the logit gap between the observed share of all-equal groups and the model's,
// the observed share shrunk towards the model's by prior tasks: 0 with no tasks, and the
// whole gap once the tasks far outnumber prior. It is bounded by ±gradedMaxOffset.
func (s *gradedSums) offset(prior float64) float64 {
	if s.tasks <= 0 {
		return 0
	}
	model := s.model / s.tasks
	observed := (s.observed + prior*model) / (s.tasks + prior)
	return min(max(logit(observed)-logit(model), -gradedMaxOffset), gradedMaxOffset)
}

// gradedMaxOffset bounds the offset: e^4 ≈ 55 times the model's odds either way.
const gradedMaxOffset = 4

// shiftDegenerate moves a chance of an all-equal group by off in logits; off = 0 leaves it
// exactly as it is.
func shiftDegenerate(p, off float64) float64 {
	if off == 0 || p >= 1 {
		return p
	}
	return clamp01(sigmoid(logit(p) + off))
}

// taskOffset is the offset a task's prediction takes: the environment's offset off for a task
// without groups of its own, and none once it has some: its own observed share, blended in
// Prediction.PDegenerate, then speaks for it. (Shifting the model of a task with groups as
// well, wholly or by prior/(prior + groups), over-predicted re-chosen tasks in the lookalike
// world, whose blend alone was calibrated: BENCHMARKS.md, "Graded rewards".)
func taskOffset(off float64, t *stats.Task) float64 {
	if t.Groups == 0 {
		return off
	}
	return 0
}
