package propagate

import "github.com/envsched/envsched/stats"

// Graded rewards (not all 0 or 1: partial credit, a continuous score) tie fewer of a task's
// groups to its mean than the Beta-Binomial model supposes: a task that scores 0.5 every time
// has mean ½, which the model reads as a coin, yet every group it returns is all-equal. For an
// environment with graded rewards propagate therefore measures, over the groups of all its
// tasks (graded or not yet: a task that always fails is part of the same population), how far
// the observed share of all-equal groups lies from what 0/1 rewards at each task's mean would
// give, and shifts the Beta-Binomial chance of every node of that environment by
// that gap in logits (gradedSums.offset). A graded task's own observed share then still
// outweighs the shifted model as its groups accumulate (Prediction.PDegenerate). Environments
// whose rewards are all 0 or 1 get no offset: their predictions do not change.

// gradedSums are the sums, over the tasks of one environment, that measure the offset:
// groups of two or more rollouts, the all-equal ones among them, and the number of all-equal
// groups that 0/1 rewards at each task's mean would have given.
type gradedSums struct{ groups, degenerate, model float64 }

// addTask counts the groups of one task; g is the group size of the model.
func (s *gradedSums) addTask(t *stats.Task, g int) {
	if t.Groups == 0 {
		return
	}
	m := clamp01(t.Sum / float64(t.Rollouts))
	n := float64(t.Groups)
	s.groups += n
	s.degenerate += float64(t.Degenerate)
	s.model += n * (pow(m, g) + pow(1-m, g))
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
	s.groups += o.groups
	s.degenerate += o.degenerate
	s.model += o.model
}

// offset is the logit gap between the observed share of all-equal groups and the model's,
// the observed share shrunk towards the model's by prior groups: 0 with no groups, and the
// whole gap once the groups far outnumber prior. It is bounded by ±gradedMaxOffset.
func (s *gradedSums) offset(prior float64) float64 {
	if s.groups <= 0 {
		return 0
	}
	model := s.model / s.groups
	observed := (s.degenerate + prior*model) / (s.groups + prior)
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
