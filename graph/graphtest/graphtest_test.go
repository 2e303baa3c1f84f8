package graphtest

import (
	"fmt"
	"math"
	"testing"

	"github.com/envsched/envsched/graph"
)

func TestRandomShape(t *testing.T) {
	for _, tc := range []struct{ n, envs, degree int }{
		{0, 3, 10}, {1, 1, 10}, {2, 1, 2}, {1000, 7, 10}, {5000, 50, 6}, {300, 1, 4}, {10, 10, 4},
	} {
		g := Random(tc.n, tc.envs, tc.degree, 1)
		if g.Len() != tc.n {
			t.Fatalf("n=%d: Len %d", tc.n, g.Len())
		}
		checkGraph(t, g)
		if tc.n >= 1000 {
			avg := float64(g.NumEdges()) / float64(g.Len())
			if math.Abs(avg-float64(tc.degree)) > 0.1*float64(tc.degree) {
				t.Errorf("n=%d degree=%d: mean degree %.2f", tc.n, tc.degree, avg)
			}
		}
	}
}

func TestRandomDeterministic(t *testing.T) {
	a, b, c := Random(2000, 5, 8, 42), Random(2000, 5, 8, 42), Random(2000, 5, 8, 43)
	if !sameGraph(a, b) {
		t.Fatal("same seed gave different graphs")
	}
	if sameGraph(a, c) {
		t.Fatal("different seeds gave the same graph")
	}
}

func sameGraph(a, b *graph.Graph) bool {
	if a.Len() != b.Len() || a.NumEdges() != b.NumEdges() {
		return false
	}
	for i := range a.Len() {
		ea, eb := a.Neighbors(i), b.Neighbors(i)
		if len(ea) != len(eb) {
			return false
		}
		for k := range ea {
			if ea[k] != eb[k] {
				return false
			}
		}
	}
	return true
}

// checkGraph asserts what a consumer relies on: sorted nodes, no self edges, no duplicate
// neighbours, symmetric edges with equal weights, Cross exactly when the environments differ,
// and weights and similarities in (0, 1].
func checkGraph(t *testing.T, g *graph.Graph) {
	t.Helper()
	for i := 1; i < g.Len(); i++ {
		p, q := g.Nodes[i-1], g.Nodes[i]
		if p.Env > q.Env || (p.Env == q.Env && p.Task >= q.Task) {
			t.Fatalf("nodes %d, %d out of order", i-1, i)
		}
	}
	for i := range g.Len() {
		seen := map[int32]bool{}
		for _, e := range g.Neighbors(i) {
			if int(e.To) == i || seen[e.To] {
				t.Fatalf("node %d: self or repeated edge to %d", i, e.To)
			}
			seen[e.To] = true
			if e.Weight <= 0 || e.Weight > 1 || e.Sim <= 0 || e.Sim > 1 {
				t.Fatalf("node %d: edge %+v out of (0,1]", i, e)
			}
			if e.Cross != (g.Nodes[i].Env != g.Nodes[e.To].Env) {
				t.Fatalf("node %d: Cross flag wrong on %+v", i, e)
			}
			if !hasEdge(g, int(e.To), int32(i), e.Weight) {
				t.Fatalf("edge %d->%d has no mirror", i, e.To)
			}
		}
	}
}

func hasEdge(g *graph.Graph, from int, to int32, w float32) bool {
	for _, e := range g.Neighbors(from) {
		if e.To == to && e.Weight == w {
			return true
		}
	}
	return false
}

func BenchmarkRandom(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(sizeName(n), func(b *testing.B) {
			for b.Loop() {
				Random(n, 20, 10, 1)
			}
		})
	}
}

func sizeName(n int) string {
	if n >= 1_000_000 {
		return fmt.Sprintf("n=%dM", n/1_000_000)
	}
	return fmt.Sprintf("n=%dk", n/1000)
}
