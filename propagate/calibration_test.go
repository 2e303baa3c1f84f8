package propagate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

// catalogue is a synthetic world with known success probabilities: environments of different
// difficulty, and inside each, clusters of similar tasks whose probabilities lie close
// together. The graph ties each task to the other tasks of its cluster (and, more weakly, to
// the same cluster of one other environment, which shares the skill) plus a few random tasks
// of its environment that are not alike at all.
type catalogue struct {
	g    *graph.Graph
	prob []float64
}

func newCatalogue(rng *rand.Rand, envs, clusters, perCluster int) catalogue {
	var c catalogue
	var names []string
	var nodes []graph.Node
	skill := make([]float64, clusters) // shared across environments
	for k := range skill {
		skill[k] = rng.NormFloat64() * 1.5
	}
	for e := range envs {
		names = append(names, fmt.Sprintf("env%02d", e))
		diff := rng.NormFloat64() * 1.2
		for k := range clusters {
			for j := range perCluster {
				nodes = append(nodes, graph.Node{Env: int32(e), Task: fmt.Sprintf("c%02d-%03d", k, j)})
				c.prob = append(c.prob, 1/(1+math.Exp(-(diff+skill[k]+0.4*rng.NormFloat64()))))
			}
		}
	}
	c.g = graph.New(names, nodes, catalogueEdges(rng, envs, clusters, perCluster))
	return c
}

func catalogueEdges(rng *rand.Rand, envs, clusters, perCluster int) [][]graph.Edge {
	n := envs * clusters * perCluster
	adj := make([][]graph.Edge, n)
	link := func(i, j int, w, sim float32, cross bool) {
		adj[i] = append(adj[i], graph.Edge{To: int32(j), Weight: w, Sim: sim, Cross: cross})
		adj[j] = append(adj[j], graph.Edge{To: int32(i), Weight: w, Sim: sim, Cross: cross})
	}
	idx := func(e, k, j int) int { return (e*clusters+k)*perCluster + j }
	for e := range envs {
		for k := range clusters {
			for j := range perCluster {
				for j2 := j + 1; j2 < perCluster; j2++ {
					link(idx(e, k, j), idx(e, k, j2), 0.8, 0.8, false)
				}
				if envs > 1 {
					e2 := (e + 1) % envs
					link(idx(e, k, j), idx(e2, k, rng.IntN(perCluster)), 0.3, 0.6, true)
				}
				link(idx(e, k, j), idx(e, rng.IntN(clusters), rng.IntN(perCluster)), 0.2, 0.3, false)
			}
		}
	}
	return adj
}

// history gives each task 0 to 3 groups of g rollouts at random rounds before round now;
// about a third of the tasks have none.
func (c catalogue) history(rng *rand.Rand, g int, now int64) []stats.Task {
	tasks := make([]stats.Task, len(c.prob))
	for i, p := range c.prob {
		for range rng.IntN(4) {
			round := 1 + rng.Int64N(now-1)
			var grp stats.Group
			for range g {
				tasks[i].Add(bernoulli(rng, p), round, round, true, &grp, stats.DefaultDecay)
			}
		}
	}
	return tasks
}

func bernoulli(rng *rand.Rand, p float64) float64 {
	if rng.Float64() < p {
		return 1
	}
	return 0
}

// nextGroupDegenerate draws the next group of g rollouts of a task of probability p.
func nextGroupDegenerate(rng *rand.Rand, p float64, g int) bool {
	first := bernoulli(rng, p)
	for range g - 1 {
		if bernoulli(rng, p) != first {
			return false
		}
	}
	return true
}

// baselines are the simple predictors the graph must beat.
type baselines struct {
	taskBeta      float64 // Beta(1, 1) plus the task's own decayed evidence
	taskBetaFull  float64 // Beta(1, 1) plus all the task's rollouts, undecayed
	envMean       float64 // the environment's mean reward taken as every task's probability
	envMeanPrior  float64 // Beta(κ·m_e, κ·(1−m_e)) for every task of the environment
	graph, nograd float64
}

func TestDegenerateChanceIsBetterCalibratedThanBaselines(t *testing.T) {
	const G, now = 8, 20
	var sum baselines
	var n int
	for seed := range 4 {
		rng := rand.New(rand.NewPCG(uint64(seed), 99))
		c := newCatalogue(rng, 6, 12, 8)
		tasks := c.history(rng, G, now)
		preds := mustPredict(t, c.g, tasks, now, DefaultParams())
		envMean := envMeans(c.g, tasks)
		for i, p := range c.prob {
			deg := 0.0
			if nextGroupDegenerate(rng, p, G) {
				deg = 1
			}
			a, b := tasks[i].Evidence(now, stats.DefaultDecay)
			m := envMean[c.g.Nodes[i].Env]
			sum.graph += sq(preds[i].PDeg - deg)
			sum.taskBeta += sq(BetaBinomialDegenerate(1+a, 1+b, G) - deg)
			sum.taskBetaFull += sq(BetaBinomialDegenerate(1+tasks[i].Sum, 1+float64(tasks[i].Rollouts)-tasks[i].Sum, G) - deg)
			sum.envMean += sq(math.Pow(m, G) + math.Pow(1-m, G) - deg)
			sum.envMeanPrior += sq(BetaBinomialDegenerate(2*m, 2*(1-m), G) - deg)
			n++
		}
	}
	f := float64(n)
	t.Logf("Brier score of the next group's degenerate chance over %d tasks: graph %.4f, task Beta (decayed) %.4f, task Beta (all rollouts) %.4f, env mean %.4f, env prior %.4f",
		n, sum.graph/f, sum.taskBeta/f, sum.taskBetaFull/f, sum.envMean/f, sum.envMeanPrior/f)
	for name, b := range map[string]float64{"task Beta (decayed)": sum.taskBeta, "task Beta (all rollouts)": sum.taskBetaFull, "env mean": sum.envMean, "env prior": sum.envMeanPrior} {
		if sum.graph >= b {
			t.Errorf("graph predictions (Brier %.4f) are not better calibrated than %s (%.4f)", sum.graph/f, name, b/f)
		}
	}
}

func envMeans(g *graph.Graph, tasks []stats.Task) []float64 {
	s := make([]float64, len(g.Envs))
	n := make([]float64, len(g.Envs))
	for i := range tasks {
		e := g.Nodes[i].Env
		s[e] += tasks[i].Sum
		n[e] += float64(tasks[i].Rollouts)
	}
	for e := range s {
		s[e] = (s[e] + 0.5) / (n[e] + 1)
	}
	return s
}

func sq(x float64) float64 { return x * x }
