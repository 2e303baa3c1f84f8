package propagate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/graph/graphtest"
	"github.com/envsched/envsched/stats"
)

// loadsWorld is a random graph of n nodes (the edges of every seventh node's first half given
// no similarity, every eleventh node's all of it, every fifth node but one edge and every
// thirteenth node none) with
// statistics for two nodes in three at rounds before, at and after round 30.
func loadsWorld(n int) (*graph.Graph, []stats.Task) {
	g := graphtest.Random(n, 5, 10, 3)
	for i := range g.Len() {
		es := g.Neighbors(i)
		switch {
		case i%11 == 0:
			for k := range es {
				es[k].Sim = 0
			}
		case i%7 == 0:
			for k := range es[:len(es)/2] {
				es[k].Sim = 0
			}
		}
	}
	var adj [][]graph.Edge
	for i := range g.Len() {
		switch {
		case i%13 == 0:
			adj = append(adj, nil)
		case i%5 == 0: // one edge: a total weight below MinTotalWeight
			adj = append(adj, g.Neighbors(i)[:1])
		default:
			adj = append(adj, g.Neighbors(i))
		}
	}
	g = graph.New(g.Envs, g.Nodes, adj)
	rng := rand.New(rand.NewPCG(uint64(n), 9))
	tasks := make([]stats.Task, n)
	for i := range tasks {
		if i%3 == 0 {
			continue
		}
		rounds := int64(1 + rng.IntN(40))
		var grp stats.Group
		for range 1 + rng.IntN(12) {
			r := 0.0
			if rng.Float64() < 0.4 {
				r = 1
			}
			tasks[i].Add(r, rounds, rounds, true, &grp, stats.DefaultDecay)
		}
	}
	return g, tasks
}

// transferLoad is the neighbour load as batcher's transfer factor works it out from the
// predictions: Σ sim·Own / Σ sim over node i's edges, in order; 0 with no similarity.
func transferLoad(g *graph.Graph, preds []Prediction, i int) float64 {
	var sum, w float64
	for _, e := range g.Neighbors(i) {
		sum += float64(e.Sim) * preds[e.To].Own
		w += float64(e.Sim)
	}
	if w == 0 {
		return 0
	}
	return sum / w
}

// oneHopBorrowed is what node i borrows over one hop as the separate pass worked it out before
// the walk moved into finish: the one-hop sums rounded to float32, then the cap.
func oneHopBorrowed(g *graph.Graph, tasks []stats.Task, round int64, p Params, i int) float64 {
	var w, sa, sb float64
	for _, e := range g.Neighbors(i) {
		t := &tasks[e.To]
		f := 1.0
		if k := round - t.Round; k > 0 {
			f = math.Pow(p.Decay, float64(k))
		}
		ew := float64(e.Weight)
		w += ew
		sa += ew * float64(float32(t.A*f))
		sb += ew * float64(float32(t.B*f))
	}
	inv := p.Gamma / max(w, p.MinTotalWeight)
	ba, bb := float64(float32(sa*inv)), float64(float32(sb*inv))
	if c := ba + bb; c > p.BorrowCap {
		f := p.BorrowCap / c
		ba, bb = ba*f, bb*f
	}
	return ba + bb
}

// TestLoadsAreTheTransferFactorsSums: with Params.Loads, Predict's loads are, bit for bit, what
// the transfer factor works out from the predictions, for no, one and two hops, with and
// without borrowing, on graphs below and above the size at which the passes go parallel; the
// predictions are those of a Predictor without Loads, and one hop borrows what the separate
// pass did. It fails when the walk sums in another order, reads the float32 evidence for the
// load, or misses a node.
func TestLoadsAreTheTransferFactorsSums(t *testing.T) {
	for _, n := range []int{500, 40_000} {
		g, tasks := loadsWorld(n)
		for _, c := range []struct {
			hops  int
			gamma float64
		}{{0, 0.2}, {1, 0}, {1, 0.2}, {2, 0.2}, {2, 0}} {
			t.Run(fmt.Sprintf("n=%d/hops=%d/gamma=%v", n, c.hops, c.gamma), func(t *testing.T) {
				p := DefaultParams()
				p.Hops, p.Gamma, p.BorrowCap = c.hops, c.gamma, 1.5
				plain := mustPredict(t, g, tasks, 30, p)
				p.Loads = true
				pr, err := NewPredictor(p)
				if err != nil {
					t.Fatal(err)
				}
				preds, _, err := pr.Predict(g, tasks, 30, State{})
				if err != nil {
					t.Fatal(err)
				}
				loads, zero := pr.Loads(), 0
				if len(loads) != n {
					t.Fatalf("%d loads for %d nodes", len(loads), n)
				}
				for i := range n {
					if want := transferLoad(g, preds, i); loads[i] != want {
						t.Fatalf("node %d: load %v, the transfer factor's %v", i, loads[i], want)
					}
					if loads[i] == 0 {
						zero++
					}
					if preds[i] != plain[i] {
						t.Fatalf("node %d: prediction with loads %+v, without %+v", i, preds[i], plain[i])
					}
					if c.hops == 1 && c.gamma > 0 {
						if want := oneHopBorrowed(g, tasks, 30, p, i); preds[i].Borrowed != want {
							t.Fatalf("node %d: borrowed %v, the one-hop pass's %v", i, preds[i].Borrowed, want)
						}
					}
				}
				if zero == n || zero == 0 {
					t.Fatalf("%d of %d loads are 0: the world tests nothing", zero, n)
				}
			})
		}
	}
}

// TestLoadsOffIsNil: without Params.Loads, Loads returns nil, so that selection works the
// loads out itself.
func TestLoadsOffIsNil(t *testing.T) {
	g, tasks := loadsWorld(200)
	pr, err := NewPredictor(DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := pr.Predict(g, tasks, 30, State{}); err != nil {
		t.Fatal(err)
	}
	if l := pr.Loads(); l != nil {
		t.Fatalf("Loads without Params.Loads: %d values, want nil", len(l))
	}
}
