package batcher

import (
	"fmt"
	"math"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/stats"
)

// gradedSelectWorld is two environments without edges, predicted for groups of 4 at round 4.
// "graded" (partial credit): six tasks whose three groups were each 0.5, 1, 0.5, 1 (never
// all-equal, a small spread), six whose groups were 0, 1, 1, 1, then all 1, then all 0 (a wide
// spread when unequal, all-equal two times of three), six whose groups were all 0.5 and six
// never tried. "binary": six tasks whose groups were 0, 1, 1, 1 and six never tried.
func gradedSelectWorld(t *testing.T) (*graph.Graph, []propagate.Prediction, []stats.Task) {
	t.Helper()
	var nodes []graph.Node
	var tasks []stats.Task
	add := func(env int32, name string, groups [][]float64) {
		var st stats.Task
		for r, rewards := range groups {
			var g stats.Group
			for _, x := range rewards {
				st.Add(x, int64(r+1), int64(r+1), true, &g, stats.DefaultDecay)
			}
		}
		nodes = append(nodes, graph.Node{Env: env, Task: name})
		tasks = append(tasks, st)
	}
	spread, stuck := []float64{0.5, 1, 0.5, 1}, []float64{0.5, 0.5, 0.5, 0.5}
	for i := range 6 {
		add(0, fmt.Sprintf("spread-%d", i), [][]float64{spread, spread, spread})
		add(0, fmt.Sprintf("coin-%d", i), [][]float64{{0, 1, 1, 1}, {1, 1, 1, 1}, {0, 0, 0, 0}})
		add(0, fmt.Sprintf("stuck-%d", i), [][]float64{stuck, stuck, stuck})
		add(0, fmt.Sprintf("untried-%d", i), nil)
	}
	for i := range 6 {
		add(1, fmt.Sprintf("mixed-%d", i), [][]float64{{0, 1, 1, 1}})
		add(1, fmt.Sprintf("fresh-%d", i), nil)
	}
	g := graph.New([]string{"graded", "binary"}, nodes, make([][]graph.Edge, len(nodes)))
	pp := propagate.DefaultParams()
	pp.GroupSize = 4
	preds, err := propagate.Predict(g, tasks, 4, pp)
	if err != nil {
		t.Fatal(err)
	}
	return g, preds, tasks
}

// TestGradedTasksValuedByInformativeChance: in an environment with graded rewards a task's
// mean does not tell its spread, so the default values its tasks by the chance of an
// unequal group (ExploitGraded, on the variance's scale: ExploitMatched) and not by 4 × the
// predicted variance. The graded
// environment's quota of six then goes to the six tasks that never returned an all-equal
// group; valued by the variance (the rule before), their spread of 0.5 to 1 ranks them
// below tasks whose rare unequal groups spread from 0 to 1, and the batch takes slots that
// the tasks' own all-equal groups say are likely to teach nothing. Tasks with 0/1 rewards
// keep 4 × variance either way.
func TestGradedTasksValuedByInformativeChance(t *testing.T) {
	g, preds, tasks := gradedSelectWorld(t)
	for i, pr := range preds {
		if want := g.Nodes[i].Env == 0; pr.Graded() != want {
			t.Fatalf("set-up: node %s graded %v, want %v", g.Nodes[i].Task, pr.Graded(), want)
		}
	}
	req := Request{Size: 12, GroupSize: 4, Step: 4, Seed: 7}
	spreadChosen := func(p Params) (n int, b Batch) {
		t.Helper()
		p.RandomShare, p.SimPenalty, p.QuotaSmoothing, p.QuotaSize = 0, 0, 1, 0 // six slots each
		b, err := Select(g, preds, tasks, req, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, pk := range b.Picks {
			if name := g.Nodes[pk.Node].Task; len(name) > 6 && name[:6] == "spread" {
				n++
			}
		}
		return n, b
	}
	n, b := spreadChosen(DefaultParams())
	if n != 6 {
		t.Errorf("default: %d of the six never-degenerate graded tasks chosen, want all six: %v", n, taskNames(g, b))
	}
	tab := newMatchedTable(4)
	for _, pk := range b.Picks {
		pr := preds[pk.Node]
		want := math.Min(1, 4*pr.Var)
		if pr.Graded() {
			want = tab.value(pr.PDegenerate(4))
		}
		// Transfer is the only factor on top, and it is 1 here: no edges.
		if math.Abs(pk.Exploit-want) > 1e-12 {
			t.Errorf("%s: exploit %v, want %v (graded %v)", g.Nodes[pk.Node].Task, pk.Exploit, want, pr.Graded())
		}
	}
	for _, e := range []Exploit{ExploitInformative, ExploitVariance} {
		p := DefaultParams()
		p.ExploitGraded = e
		n, b := spreadChosen(p)
		if want := e != ExploitVariance; (n == 6) != want {
			t.Errorf("graded tasks valued by %v: %d of six never-degenerate tasks chosen (%v)", e, n, taskNames(g, b))
		}
	}
}

func taskNames(g *graph.Graph, b Batch) []string {
	out := make([]string, len(b.Picks))
	for i, pk := range b.Picks {
		out[i] = g.Nodes[pk.Node].Task
	}
	return out
}

func TestExploitGradedValidated(t *testing.T) {
	p := DefaultParams()
	p.ExploitGraded = Exploit(9)
	if err := p.Validate(); err == nil {
		t.Error("exploit for graded rewards 9: no error")
	}
}
