package batcher

import (
	"fmt"
	"slices"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/stats"
)

// transferWorld is one environment of two untried candidates, a and b, each with three
// neighbours of its own (predicted nearly always failed, so never chosen over a or b): a's
// neighbours have been rolled out a lot lately, b's never. a's prediction is slightly better.
func transferWorld() (*graph.Graph, []propagate.Prediction, []stats.Task) {
	nodes := []graph.Node{{Env: 0, Task: "a"}, {Env: 0, Task: "b"}}
	adj := make([][]graph.Edge, 8)
	for c, name := range []string{"a", "b"} {
		for k := range 3 {
			n := int32(len(nodes))
			nodes = append(nodes, graph.Node{Env: 0, Task: name + "-neighbour-" + string(rune('0'+k))})
			adj[c] = append(adj[c], graph.Edge{To: n, Weight: 0.5, Sim: 0.5})
			adj[n] = append(adj[n], graph.Edge{To: int32(c), Weight: 0.5, Sim: 0.5})
		}
	}
	g := graph.New([]string{"env"}, nodes, adj)
	preds := make([]propagate.Prediction, g.Len())
	tasks := make([]stats.Task, g.Len())
	for i := range preds {
		preds[i] = propagate.Prediction{Alpha: 1, Beta: 9, Mean: 0.1, Var: propagate.BetaVariance(1, 9)}
	}
	preds[0] = propagate.Prediction{Alpha: 5.5, Beta: 4.5, Mean: 0.55, Var: propagate.BetaVariance(5.5, 4.5)}
	preds[1] = propagate.Prediction{Alpha: 6, Beta: 4, Mean: 0.6, Var: propagate.BetaVariance(6, 4)}
	for i := 2; i < 5; i++ { // a's neighbours: trained a lot lately
		preds[i].Own = 40
		tasks[i] = stats.Task{Rollouts: 40, Chosen: 5, LastChosen: 9}
	}
	return g, preds, tasks
}

// TestTransferPrefersUntrainedNeighbourhoods: of two untried tasks, the one whose neighbours
// have been trained a lot loses its lead with Transfer on; without it the better prediction
// wins. Nothing else tells them apart (same coverage values, no random slot, one pick).
func TestTransferPrefersUntrainedNeighbourhoods(t *testing.T) {
	g, preds, tasks := transferWorld()
	req := Request{Size: 1, GroupSize: 8, Step: 10, Seed: 3}
	for _, c := range []struct {
		transfer float64
		want     string
	}{{0, "a"}, {0.3, "b"}} {
		p := DefaultParams()
		p.RandomShare, p.Transfer = 0, c.transfer
		b, err := Select(g, preds, tasks, req, p)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Nodes[b.Picks[0].Node].Task; got != c.want {
			t.Errorf("transfer %v: chose %s, want %s (exploit %.3f)", c.transfer, got, c.want, b.Picks[0].Exploit)
		}
	}
	p := DefaultParams()
	p.Transfer = 1.5
	if err := p.Validate(); err == nil {
		t.Error("transfer 1.5 accepted, want an error")
	}
}

// TestTransferReadsGivenLoads: loads handed in the request (as the scheduler hands
// propagate's) choose what the loads worked out here choose, and are what is read: the
// transferWorld's loads of a and b swapped choose a; loads not indexed like the nodes are an
// error.
func TestTransferReadsGivenLoads(t *testing.T) {
	g, preds, tasks := transferWorld()
	p := DefaultParams()
	p.RandomShare = 0
	own := make([]float64, g.Len())
	loads := make([]float64, g.Len())
	for i, pr := range preds {
		own[i] = pr.Own
	}
	for i := range loads {
		var sum, w float64
		for _, e := range g.Neighbors(i) {
			sum += float64(e.Sim) * own[e.To]
			w += float64(e.Sim)
		}
		if w > 0 {
			loads[i] = sum / w
		}
	}
	req := Request{Size: 3, GroupSize: 8, Step: 10, Seed: 3}
	want, err := Select(g, preds, tasks, req, p)
	if err != nil {
		t.Fatal(err)
	}
	req.Loads = loads
	got, err := Select(g, preds, tasks, req, p)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got.Picks) != fmt.Sprint(want.Picks) {
		t.Errorf("with the loads given: %+v, worked out here: %+v", got.Picks, want.Picks)
	}
	swapped := slices.Clone(loads)
	swapped[0], swapped[1] = loads[1], loads[0]
	req.Loads, req.Size = swapped, 1
	b, err := Select(g, preds, tasks, req, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Nodes[b.Picks[0].Node].Task; got != "a" {
		t.Errorf("loads of a and b swapped: chose %s, want a", got)
	}
	req.Loads = loads[:3]
	if _, err := Select(g, preds, tasks, req, p); err == nil {
		t.Error("3 loads for 8 nodes accepted, want an error")
	}
}
