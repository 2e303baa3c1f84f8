package propagate

import (
	"math"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

// twoEnvs returns a graph without edges: n nodes in environment "graded" (0), then n in
// "binary" (1).
func twoEnvs(n int) *graph.Graph {
	nodes := make([]graph.Node, 2*n)
	for i := range nodes {
		nodes[i] = graph.Node{Env: int32(i / n), Task: string(rune('a' + i))}
	}
	return graph.New([]string{"graded", "binary"}, nodes, make([][]graph.Edge, 2*n))
}

// gradedWorld fills environment 0 of twoEnvs(n) with tasks that give groups of g (node 0
// untried, node 1 one group, the others two groups each), and environment 1 with tasks
// whose groups are mixed 0/1 (node n untried).
func gradedWorld(n int, g []float64) []stats.Task {
	tasks := make([]stats.Task, 2*n)
	rollGroup(&tasks[1], 1, g...)
	for i := 2; i < n; i++ {
		rollGroup(&tasks[i], 1, g...)
		rollGroup(&tasks[i], 1, g...)
	}
	for i := n + 1; i < 2*n; i++ {
		rollGroup(&tasks[i], 1, 0, 1, 1, 0)
		rollGroup(&tasks[i], 1, 1, 1, 1, 1)
	}
	return tasks
}

// TestGradedTaskStuckAtHalfIsDegenerate: in an environment whose tasks return all-0.5 groups,
// every group is all-equal however their means read as a coin. An untried task of that
// environment was predicted 0.506 (the Beta-Binomial of a mean of ½); it must now be mostly
// degenerate. A task with groups of its own is too: with the fitted weight (GradedFit) its
// own groups speak (gradedfit_test.go has the environment where they tell tasks apart);
// without it, it keeps the blend of its observed share with the unshifted Beta-Binomial by
// VarPrior groups, which grows with its groups.
func TestGradedTaskStuckAtHalfIsDegenerate(t *testing.T) {
	const n = 12
	p := DefaultParams()
	p.GroupSize = 4
	world := gradedWorld(n, []float64{0.5, 0.5, 0.5, 0.5})
	preds := mustPredict(t, twoEnvs(n), world, 1, p)
	if pr := preds[0]; pr.PDeg < 0.8 {
		t.Errorf("untried task among stuck tasks: p_degenerate %.3f (Beta-Binomial %.3f); want above 0.8",
			pr.PDeg, BetaBinomialDegenerate(pr.Alpha, pr.Beta, 4))
	}
	for _, i := range []int{1, 2} {
		if pr := preds[i]; pr.PDeg < 0.9 {
			t.Errorf("task %d among stuck tasks, all-0.5 groups: p_degenerate %.3f with the fit, want above 0.9", i, pr.PDeg)
		}
	}
	p.GradedFit = false
	preds = mustPredict(t, twoEnvs(n), world, 1, p)
	for _, c := range []struct {
		i      int
		groups float64
	}{{1, 1}, {2, 2}} {
		pr := preds[c.i]
		bb := BetaBinomialDegenerate(pr.Alpha, pr.Beta, 4)
		w := p.VarPrior
		if want := (c.groups + w*bb) / (c.groups + w); math.Abs(pr.PDeg-want) > 1e-6 {
			t.Errorf("task with %v all-0.5 groups: p_degenerate %.4f, want the blend %.4f", c.groups, pr.PDeg, want)
		}
	}
	if preds[2].PDeg <= preds[1].PDeg {
		t.Errorf("a second all-0.5 group should raise p_degenerate: %.3f then %.3f", preds[1].PDeg, preds[2].PDeg)
	}
}

// TestGradedSpreadTaskIsLessDegenerate is the sibling: tasks whose groups spread over 0, 0.5
// and 1 are all-equal less often than 0/1 rewards of the same mean would be, and their
// untried neighbour in the environment is predicted so too.
func TestGradedSpreadTaskIsLessDegenerate(t *testing.T) {
	const n = 12
	p := DefaultParams()
	p.GroupSize = 4
	preds := mustPredict(t, twoEnvs(n), gradedWorld(n, []float64{0, 0.5, 1, 0.5}), 1, p)
	pr := preds[0]
	if bb := BetaBinomialDegenerate(pr.Alpha, pr.Beta, 4); pr.PDeg >= bb {
		t.Errorf("untried task among spread graded tasks: p_degenerate %.3f, Beta-Binomial %.3f; want below", pr.PDeg, bb)
	}
}

// TestBinaryEnvironmentUnchanged: nodes of an environment whose rewards are all 0 or 1 keep
// the exact Beta-Binomial chance, whatever another environment's rewards are.
func TestBinaryEnvironmentUnchanged(t *testing.T) {
	const n = 12
	p := DefaultParams()
	p.GroupSize = 4
	for _, g := range [][]float64{{0.5, 0.5, 0.5, 0.5}, {0, 0.5, 1, 0.5}, {0, 1, 1, 1}} {
		preds := mustPredict(t, twoEnvs(n), gradedWorld(n, g), 1, p)
		for i := n; i < 2*n; i++ {
			pr := preds[i]
			if bb := BetaBinomialDegenerate(pr.Alpha, pr.Beta, 4); pr.PDeg != bb || pr.PDegenerate(8) != BetaBinomialDegenerate(pr.Alpha, pr.Beta, 8) {
				t.Errorf("graded env %v, binary node %d: p_degenerate %v, Beta-Binomial %v", g, i, pr.PDeg, bb)
			}
		}
		if g[1] == 1 { // the first environment is binary too
			for i := range n {
				if pr := preds[i]; pr.PDeg != BetaBinomialDegenerate(pr.Alpha, pr.Beta, 4) {
					t.Errorf("binary node %d moved: %v", i, pr.PDeg)
				}
			}
		}
	}
}

func TestGradedOffsetShrinksAndIsBounded(t *testing.T) {
	var none gradedSums
	if off := none.offset(2); off != 0 {
		t.Errorf("no tasks: offset %v, want 0", off)
	}
	one := gradedSums{tasks: 1, observed: 1, model: 0.125}
	many := gradedSums{tasks: 100, observed: 100, model: 12.5}
	if a, b := one.offset(2), many.offset(2); !(a > 0 && a < b && b <= gradedMaxOffset) {
		t.Errorf("offsets: one task %v, 100 tasks %v; want 0 < one < many <= %v", a, b, float64(gradedMaxOffset))
	}
	even := gradedSums{tasks: 50, observed: 5, model: 5}
	if off := even.offset(2); math.Abs(off) > 1e-12 {
		t.Errorf("observed as modelled: offset %v, want 0", off)
	}
	if p := shiftDegenerate(0.3, 0); p != 0.3 {
		t.Errorf("zero shift moved %v", p)
	}
}

// TestGradedSumsCountEachTaskOnceAtItsGroupSize: a task weighs once however many groups it
// has, and its model share is that of its own group size (rollouts per group), not of the
// group size predictions are asked for.
func TestGradedSumsCountEachTaskOnceAtItsGroupSize(t *testing.T) {
	var pairs, quads stats.Task
	rollGroup(&pairs, 1, 0.5, 0.5)
	for range 5 {
		rollGroup(&quads, 1, 0, 1, 0.5, 1)
	}
	rollGroup(&quads, 1, 1, 1, 1, 1)
	var s gradedSums
	s.addTask(&pairs)
	s.addTask(&quads)
	s.addTask(&stats.Task{}) // no groups: not counted
	m := quads.Sum / float64(quads.Rollouts)
	want := gradedSums{tasks: 2, observed: 1 + 1.0/6, model: 0.5 + math.Pow(m, 4) + math.Pow(1-m, 4)}
	if math.Abs(s.tasks-want.tasks) > 1e-12 || math.Abs(s.observed-want.observed) > 1e-12 || math.Abs(s.model-want.model) > 1e-12 {
		t.Errorf("sums %+v, want %+v", s, want)
	}
}
