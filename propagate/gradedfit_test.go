package propagate

import (
	"math"
	"reflect"
	"testing"

	"github.com/envsched/envsched/stats"
)

// splitWorld is environment 0 of twoEnvs(n) as the lookalike world makes it: half its tasks
// stuck (two all-0.5 groups each), half spread (two groups over 0, 0.5 and 1), then two
// probes of one group each: node 0 all-0.5, node 1 spread. Environment 1 is binary as in
// gradedWorld.
func splitWorld(n int) []stats.Task {
	tasks := gradedWorld(n, nil)
	for i := range n {
		tasks[i] = stats.Task{}
	}
	rollGroup(&tasks[0], 1, 0.5, 0.5, 0.5, 0.5)
	rollGroup(&tasks[1], 1, 0, 0.5, 1, 0.5)
	for i := 2; i < n; i++ {
		g := []float64{0.5, 0.5, 0.5, 0.5}
		if i%2 == 1 {
			g = []float64{0, 0.5, 1, 0.5}
		}
		rollGroup(&tasks[i], 1, g...)
		rollGroup(&tasks[i], 1, g...)
	}
	return tasks
}

// TestGradedFitReadsATasksOwnGroups: in an environment whose tasks split into ones that
// always return all-0.5 groups and ones that never do, a task that returned one all-0.5
// group is all-equal again far more often than the Beta-Binomial of a mean of ½ says. With
// the model weighed a fixed 2 groups it was predicted 0.49 degenerate and kept 44% of the
// predicted variance of a task whose one group spread (so exploitation, 4 × the variance,
// still chose it); the fitted weight must make it mostly degenerate and worth little.
func TestGradedFitReadsATasksOwnGroups(t *testing.T) {
	const n = 40
	p := DefaultParams()
	p.GroupSize = 4
	preds := mustPredict(t, twoEnvs(n), splitWorld(n), 1, p)
	stuck, spread := preds[0], preds[1]
	if stuck.PDeg < 0.75 {
		t.Errorf("one all-0.5 group among stuck and spread tasks: p_degenerate %.3f, want above 0.75", stuck.PDeg)
	}
	if spread.PDeg > 0.3 {
		t.Errorf("one spread group: p_degenerate %.3f, want below 0.3", spread.PDeg)
	}
	if stuck.Var > 0.25*spread.Var {
		t.Errorf("predicted variance: one all-0.5 group %.4f, one spread group %.4f; want the first below a quarter of the second",
			stuck.Var, spread.Var)
	}
	// the other stuck tasks, two all-0.5 groups each, surer still
	if preds[2].PDeg < stuck.PDeg {
		t.Errorf("two all-0.5 groups: p_degenerate %.3f, below one group's %.3f", preds[2].PDeg, stuck.PDeg)
	}
}

// TestGradedFitOffIsTheFixedWeight: with GradedFit off a task with groups blends its observed
// share with the unshifted Beta-Binomial by Params.VarPrior groups, as before.
func TestGradedFitOffIsTheFixedWeight(t *testing.T) {
	const n = 40
	p := DefaultParams()
	p.GroupSize, p.GradedFit = 4, false
	preds := mustPredict(t, twoEnvs(n), splitWorld(n), 1, p)
	pr := preds[0]
	bb := BetaBinomialDegenerate(pr.Alpha, pr.Beta, 4)
	if want := (1 + p.VarPrior*bb) / (1 + p.VarPrior); math.Abs(pr.PDeg-want) > 1e-6 {
		t.Errorf("one all-0.5 group: p_degenerate %.4f, want the blend %.4f", pr.PDeg, want)
	}
}

// TestGradedFitKeepsTheDefaultWhereGroupsCannotTell: an environment whose graded tasks have
// two groups each and never an all-equal one says little about how far one task's
// all-equal chance departs from the model's; a task with one all-0.5 group there is not made
// near-certain degenerate (the prior on the strength keeps the default weight).
func TestGradedFitKeepsTheDefaultWhereGroupsCannotTell(t *testing.T) {
	const n = 12
	p := DefaultParams()
	p.GroupSize = 4
	tasks := gradedWorld(n, []float64{0, 0.5, 1, 0.5})
	tasks[0] = stats.Task{}
	rollGroup(&tasks[0], 1, 0.5, 0.5, 0.5, 0.5)
	on := mustPredict(t, twoEnvs(n), tasks, 1, p)[0]
	p.GradedFit = false
	off := mustPredict(t, twoEnvs(n), tasks, 1, p)[0]
	if on.PDeg > off.PDeg+0.1 {
		t.Errorf("one all-0.5 group among never-equal tasks: p_degenerate %.3f with the fit, %.3f without; want within 0.1", on.PDeg, off.PDeg)
	}
}

// TestGradedFitLeavesBinaryTasksAlone: environments whose rewards are all 0 or 1 are
// predicted the same with and without the fit, and so is every task without groups, and a
// task with 0/1 rewards only in a graded environment.
func TestGradedFitLeavesBinaryTasksAlone(t *testing.T) {
	const n = 40
	p := DefaultParams()
	p.GroupSize = 4
	tasks := splitWorld(n)
	var single stats.Task // one rollout of 0.5: graded, but no group
	rollGroup(&single, 1, 0.5)
	var binary stats.Task // groups of 0/1 rewards in the graded environment
	rollGroup(&binary, 1, 0, 1, 1, 1)
	rollGroup(&binary, 1, 1, 1, 1, 1)
	tasks[2], tasks[3] = single, binary
	on := mustPredict(t, twoEnvs(n), tasks, 1, p)
	p.GradedFit = false
	off := mustPredict(t, twoEnvs(n), tasks, 1, p)
	for i := n; i < 2*n; i++ {
		if !reflect.DeepEqual(on[i], off[i]) {
			t.Errorf("binary environment, node %d: %+v with the fit, %+v without", i, on[i], off[i])
		}
	}
	for _, i := range []int{2, 3} {
		if !reflect.DeepEqual(on[i], off[i]) {
			t.Errorf("graded environment, node %d (no groups, or 0/1 rewards): %+v with the fit, %+v without", i, on[i], off[i])
		}
	}
	if reflect.DeepEqual(on[0], off[0]) {
		t.Error("the all-0.5 probe is predicted the same with and without the fit: the test shows nothing")
	}
}

// TestBetaBinomialLogSumsToOne: the likelihood of the fit is a distribution over the number
// of all-equal groups (with the binomial coefficient it leaves out).
func TestBetaBinomialLogSumsToOne(t *testing.T) {
	for _, c := range []struct{ n, a, b float64 }{{1, 0.3, 0.7}, {4, 0.05, 0.2}, {9, 6, 2}, {30, 0.5, 31.5}} {
		var sum float64
		for d := 0.0; d <= c.n; d++ {
			coef := lgamma(c.n+1) - lgamma(d+1) - lgamma(c.n-d+1)
			sum += math.Exp(coef + betaBinomialLog(d, c.n, c.a, c.b))
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("n %v, Beta(%v, %v): probabilities sum to %v", c.n, c.a, c.b, sum)
		}
	}
}
