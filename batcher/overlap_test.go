package batcher

import (
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/stats"
)

// overlapWorld is one environment with no graph edges (so the similarity penalty is silent):
// a leader l, the best prediction, chosen first; x, which shares l's words (parse, schema), and
// y, whose words (sort, merge) no chosen task holds. x's prediction is slightly better than
// y's. Filler tasks f0-f3 hold each word once more, so that no word is one task's alone, and
// are predicted nearly always failed (never chosen over the others).
func overlapWorld() (*graph.Graph, []propagate.Prediction, []stats.Task) {
	rows := []record.Task{
		{Env: "env", Task: "l", Text: "parse schema"},
		{Env: "env", Task: "x", Text: "parse schema"},
		{Env: "env", Task: "y", Text: "sort merge"},
		{Env: "env", Task: "f0", Text: "parse"},
		{Env: "env", Task: "f1", Text: "schema"},
		{Env: "env", Task: "f2", Text: "sort"},
		{Env: "env", Task: "f3", Text: "merge"},
	}
	nodes := make([]graph.Node, len(rows))
	for i, r := range rows {
		nodes[i] = graph.Node{Env: 0, Task: r.Task}
	}
	g := graph.New([]string{"env"}, nodes, make([][]graph.Edge, len(rows))).WithFeatures(graph.TextFeatures(rows))
	preds := make([]propagate.Prediction, g.Len())
	for i := range preds {
		preds[i] = propagate.Prediction{Alpha: 1, Beta: 9, Mean: 0.1, Var: propagate.BetaVariance(1, 9)}
	}
	for i, m := range []float64{0.5, 0.47, 0.43} {
		a := 10 * m
		preds[i] = propagate.Prediction{Alpha: a, Beta: 10 - a, Mean: m, Var: propagate.BetaVariance(a, 10-a)}
	}
	return g, preds, make([]stats.Task, g.Len())
}

// TestOverlapSpreadsOverWords: without Overlap the second pick is x, the better prediction,
// though every word of x is already in the batch; with it, y, whose words are not. The pick
// states the penalty it was chosen with (x's share held is 1, y's 0).
func TestOverlapSpreadsOverWords(t *testing.T) {
	g, preds, tasks := overlapWorld()
	req := Request{Size: 2, GroupSize: 8, Step: 1, Seed: 5}
	for _, c := range []struct {
		overlap float64
		want    string
	}{{0, "x"}, {0.3, "y"}} {
		p := DefaultParams()
		p.RandomShare, p.Overlap = 0, c.overlap
		b, err := Select(g, preds, tasks, req, p)
		if err != nil {
			t.Fatal(err)
		}
		if first := g.Nodes[b.Picks[0].Node].Task; first != "l" {
			t.Fatalf("overlap %v: first pick %s, want l", c.overlap, first)
		}
		if got := g.Nodes[b.Picks[1].Node].Task; got != c.want {
			t.Errorf("overlap %v: second pick %s, want %s (picks %+v)", c.overlap, got, c.want, b.Picks)
		}
		if b.Picks[0].Penalty != 0 || b.Picks[1].Penalty != 0 {
			t.Errorf("overlap %v: penalties %v and %v, want 0 (l is first; the second shares no word with it)",
				c.overlap, b.Picks[0].Penalty, b.Picks[1].Penalty)
		}
	}
}

// TestOverlapCountsHeldWords: the share of a node's word weight held by the round, over its
// siblings: nothing taken, one task with all its words (½), two (¾), a task with none of them,
// and a node of a graph without features (0).
func TestOverlapCountsHeldWords(t *testing.T) {
	g, preds, tasks := overlapWorld()
	p := DefaultParams()
	p.Overlap = 1
	s := newSelector(new(Selector), g, preds, tasks, Request{Size: 2, GroupSize: 8, Step: 1}, p, []bool{true})
	x := int32(1)
	if got := s.overlap(x); got != 0 {
		t.Errorf("nothing taken: overlap %v, want 0", got)
	}
	s.take(2) // y: no word of x
	if got := s.overlap(x); got != 0 {
		t.Errorf("y taken: overlap %v, want 0", got)
	}
	s.take(0) // l: every word of x
	if got := s.overlap(x); got != 0.5 {
		t.Errorf("l taken: overlap %v, want 0.5", got)
	}
	s.take(3) // f0: parse once more, schema not
	want := (s.words.idf[wordOf(t, g, 3)]*0.75 + s.words.idf[wordOf(t, g, 4)]*0.5) / s.words.row[x]
	if got := s.overlap(x); got != want || got <= 0.5 || got >= 0.75 {
		t.Errorf("l and f0 taken: overlap %v, want %v (between 0.5 and 0.75)", got, want)
	}
	s.reset()
	if got := s.overlap(x); got != 0 {
		t.Errorf("after a new round: overlap %v, want 0", got)
	}
	bare := graph.New(g.Envs, g.Nodes, make([][]graph.Edge, g.Len()))
	s = newSelector(new(Selector), bare, preds, tasks, Request{Size: 2, GroupSize: 8, Step: 1}, p, []bool{true})
	s.take(0)
	if got := s.overlap(x); got != 0 {
		t.Errorf("no features: overlap %v, want 0", got)
	}
}

// wordOf is the one word of node i's row (the filler tasks hold one each).
func wordOf(t *testing.T, g *graph.Graph, i int) int32 {
	t.Helper()
	row := g.Feat.Row(i)
	if len(row) != 1 {
		t.Fatalf("node %d holds %d words, want 1", i, len(row))
	}
	return row[0]
}

// TestOverlapValidated: a negative or enormous weight is refused.
func TestOverlapValidated(t *testing.T) {
	for _, v := range []float64{-0.1, 2e6} {
		p := DefaultParams()
		p.Overlap = v
		if err := p.Validate(); err == nil {
			t.Errorf("overlap %v accepted, want an error", v)
		}
	}
}
