// Package graphtest generates synthetic graphs and catalogues for tests and benchmarks of the
// packages that consume graph.Graph (propagate, batcher) and of graph itself.
//
// Everything here is deterministic in its seed, so a benchmark or a test sees the same input on
// every run.
package graphtest

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/envsched/envsched/graph"
)

// Random returns a symmetric graph of n nodes spread evenly over envs environments with about
// degree directed edges per node (degree/2 picks per node, each added in both directions;
// duplicate picks are merged). About 80% of the picks stay in the node's own environment; the
// rest are Cross edges with Weight = Sim/2. Sim is uniform in [0.3, 1). No self edges. Nodes are
// sorted by environment, then task, as in a built graph. At n = 1M and degree 10 it takes about
// a second and 200 MB.
func Random(n, envs, degree int, seed int64) *graph.Graph {
	if n <= 0 {
		return graph.New(nil, nil, nil)
	}
	envs = max(1, min(envs, n))
	rng := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
	envNames, nodes := randomNodes(n, envs)
	pairs := randomPairs(rng, n, envs, degree)
	off, edges := toCSR(n, pairs)
	off, edges = dedupRows(off, edges)
	return graph.NewCSR(envNames, nodes, off, edges)
}

// pair is one undirected edge before it is laid out in both directions.
type pair struct {
	a, b  int32
	sim   float32
	cross bool
}

func envRange(e, n, envs int) (lo, hi int) { return e * n / envs, (e + 1) * n / envs }

func randomNodes(n, envs int) ([]string, []graph.Node) {
	envNames := make([]string, envs)
	ew := len(fmt.Sprint(envs))
	for e := range envNames {
		envNames[e] = fmt.Sprintf("env-%0*d", ew, e)
	}
	nodes := make([]graph.Node, n)
	tw := len(fmt.Sprint(n))
	for e := range envs {
		lo, hi := envRange(e, n, envs)
		for i := lo; i < hi; i++ {
			nodes[i] = graph.Node{Env: int32(e), Task: fmt.Sprintf("t%0*d", tw, i)}
		}
	}
	return envNames, nodes
}

func randomPairs(rng *rand.Rand, n, envs, degree int) []pair {
	picks := max(1, degree/2)
	if n < 2 {
		return nil
	}
	pairs := make([]pair, 0, n*picks)
	for e := range envs {
		lo, hi := envRange(e, n, envs)
		for i := lo; i < hi; i++ {
			for range picks {
				if p, ok := pickPartner(rng, i, lo, hi, n); ok {
					pairs = append(pairs, p)
				}
			}
		}
	}
	return pairs
}

// pickPartner draws a neighbour of i, in [lo, hi) (its environment) with probability 0.8 when
// that range has another node, else anywhere outside it.
func pickPartner(rng *rand.Rand, i, lo, hi, n int) (pair, bool) {
	sim := 0.3 + 0.7*rng.Float32()
	outside := n - (hi - lo)
	if hi-lo > 1 && (outside == 0 || rng.Float32() < 0.8) {
		j := lo + rng.IntN(hi-lo-1)
		if j >= i {
			j++
		}
		return pair{a: int32(i), b: int32(j), sim: sim}, true
	}
	if outside == 0 {
		return pair{}, false
	}
	j := rng.IntN(outside)
	if j >= lo {
		j += hi - lo
	}
	return pair{a: int32(i), b: int32(j), sim: sim, cross: true}, true
}

func toCSR(n int, pairs []pair) ([]int32, []graph.Edge) {
	off := make([]int32, n+1)
	for _, p := range pairs {
		off[p.a+1]++
		off[p.b+1]++
	}
	for i := 1; i <= n; i++ {
		off[i] += off[i-1]
	}
	fill := slices.Clone(off[:n])
	edges := make([]graph.Edge, off[n])
	for _, p := range pairs {
		w := p.sim
		if p.cross {
			w = p.sim / 2
		}
		edges[fill[p.a]] = graph.Edge{To: p.b, Weight: w, Sim: p.sim, Cross: p.cross}
		fill[p.a]++
		edges[fill[p.b]] = graph.Edge{To: p.a, Weight: w, Sim: p.sim, Cross: p.cross}
		fill[p.b]++
	}
	return off, edges
}

// dedupRows sorts each row by neighbour and keeps the strongest of repeated neighbours,
// compacting in place.
func dedupRows(off []int32, edges []graph.Edge) ([]int32, []graph.Edge) {
	w := int32(0)
	start := off[0]
	for i := 0; i+1 < len(off); i++ {
		row := edges[start:off[i+1]]
		start = off[i+1]
		slices.SortFunc(row, func(x, y graph.Edge) int { return int(x.To) - int(y.To) })
		off[i] = w
		for k, e := range row {
			if k > 0 && e.To == row[k-1].To {
				if e.Sim > edges[w-1].Sim {
					edges[w-1] = e
				}
				continue
			}
			edges[w] = e
			w++
		}
	}
	off[len(off)-1] = w
	return off, edges[:w:w]
}
