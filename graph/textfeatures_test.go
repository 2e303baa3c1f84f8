package graph_test

import (
	"slices"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/record"
)

// rowSet returns row i of f as a sorted copy: a row's order is not part of the contract.
func rowSet(f *graph.Features, i int) []int32 {
	return slices.Sorted(slices.Values(f.Row(i)))
}

func featureRows(f *graph.Features) [][]int32 {
	out := make([][]int32, f.Len())
	for i := range out {
		out[i] = rowSet(f, i)
	}
	return out
}

func TestTextFeaturesIds(t *testing.T) {
	tasks := []record.Task{
		{Env: "a", Task: "0", Text: "refund the order", Tools: []string{"search"}},
		{Env: "a", Task: "1", Text: "search the Order, then search again"},
		{Env: "b", Task: "2"},
		{Env: "b", Task: "3", Text: "x 42 refund", Tags: []string{"search", "order"}, Tools: []string{"order", "order"}},
	}
	f := graph.TextFeatures(tasks)
	if f.Len() != len(tasks) {
		t.Fatalf("%d rows for %d tasks", f.Len(), len(tasks))
	}
	// distinct features: words refund the order search then again; tool search, tool order;
	// tag search, tag order: 6 + 2 + 2
	if f.Dim != 10 {
		t.Errorf("Dim = %d, want 10 distinct features", f.Dim)
	}
	wantLen := []int{4, 5, 0, 4} // row 1: search the order then again; row 3: refund, tool order, tags search and order
	total := 0
	for i, n := range wantLen {
		if got := len(f.Row(i)); got != n {
			t.Errorf("row %d has %d features %v, want %d", i, got, f.Row(i), n)
		}
		total += n
		for _, id := range f.Row(i) {
			if id < 0 || int(id) >= f.Dim {
				t.Errorf("row %d: id %d outside [0, %d)", i, id, f.Dim)
			}
		}
		if r := rowSet(f, i); len(slices.Compact(r)) != len(f.Row(i)) {
			t.Errorf("row %d repeats a feature: %v", i, f.Row(i))
		}
	}
	if f.NNZ() != total {
		t.Errorf("NNZ = %d, want %d", f.NNZ(), total)
	}
	// the word "the" and "order" of tasks 0 and 1 share ids; "refund" of tasks 0 and 3 too
	shared01 := intersect(rowSet(f, 0), rowSet(f, 1))
	if len(shared01) != 2 {
		t.Errorf("tasks 0 and 1 share the words the, order, yet rows %v and %v share %v", f.Row(0), f.Row(1), shared01)
	}
	if shared03 := intersect(rowSet(f, 0), rowSet(f, 3)); len(shared03) != 1 {
		t.Errorf("tasks 0 and 3 share only the word refund, yet rows %v and %v share %v", f.Row(0), f.Row(3), shared03)
	}
	// the tool "search" of task 0 is not the word "search" of task 1: tasks 0 and 1 would
	// share three ids if it were; nor is task 3's tag "search" or tool "order"
	if shared13 := intersect(rowSet(f, 1), rowSet(f, 3)); len(shared13) != 0 {
		t.Errorf("task 1's words and task 3's tools and tags share ids %v", shared13)
	}
	if len(f.Row(2)) != 0 {
		t.Errorf("a task without text, tools or tags has features %v", f.Row(2))
	}
}

func TestTextFeaturesToolAndWordOfOneSpelling(t *testing.T) {
	f := graph.TextFeatures([]record.Task{
		{Text: "search"},
		{Tools: []string{"search"}},
		{Tags: []string{"search"}},
	})
	if f.Dim != 3 {
		t.Fatalf("the word, tool and tag search: Dim %d, want 3", f.Dim)
	}
	a, b, c := f.Row(0), f.Row(1), f.Row(2)
	if len(a) != 1 || len(b) != 1 || len(c) != 1 || a[0] == b[0] || a[0] == c[0] || b[0] == c[0] {
		t.Errorf("rows %v %v %v: want one distinct id each", a, b, c)
	}
}

func TestTextFeaturesEmpty(t *testing.T) {
	f := graph.TextFeatures(nil)
	if f.Len() != 0 || f.Dim != 0 || f.NNZ() != 0 {
		t.Errorf("no tasks: Len %d, Dim %d, NNZ %d", f.Len(), f.Dim, f.NNZ())
	}
	f = graph.TextFeatures([]record.Task{{Env: "e", Task: "t", Text: "a 1 22 ,."}, {}})
	if f.Len() != 2 || f.Dim != 0 || len(f.Row(0)) != 0 || len(f.Row(1)) != 0 {
		t.Errorf("tasks with no word that counts: Len %d, Dim %d, rows %v %v", f.Len(), f.Dim, f.Row(0), f.Row(1))
	}
}

func TestTextFeaturesDeterministic(t *testing.T) {
	tasks := []record.Task{
		{Text: "book a flight to Oslo and a hotel", Tools: []string{"flights", "hotels"}, Tags: []string{"travel"}},
		{Text: "cancel the hotel", Tools: []string{"hotels"}},
		{Text: "weather in Oslo tomorrow", Tags: []string{"travel", "weather"}},
	}
	a, b := graph.TextFeatures(tasks), graph.TextFeatures(slices.Clone(tasks))
	if a.Dim != b.Dim || a.Len() != b.Len() {
		t.Fatalf("same tasks: Dim %d and %d, Len %d and %d", a.Dim, b.Dim, a.Len(), b.Len())
	}
	for i := range a.Len() {
		if !slices.Equal(a.Row(i), b.Row(i)) {
			t.Errorf("row %d: %v, then %v", i, a.Row(i), b.Row(i))
		}
	}
}

func TestSpread(t *testing.T) {
	f := graph.TextFeatures([]record.Task{
		{Text: "alpha beta"},
		{},
		{Text: "beta gamma", Tools: []string{"delta"}},
	})
	pos := []int32{1, 2, 5}
	s := f.Spread(7, pos)
	if s.Len() != 7 || s.Dim != f.Dim || s.NNZ() != f.NNZ() {
		t.Fatalf("spread over 7: Len %d, Dim %d (want %d), NNZ %d (want %d)", s.Len(), s.Dim, f.Dim, s.NNZ(), f.NNZ())
	}
	next := 0
	for k := range 7 {
		var want []int32
		if next < len(pos) && int(pos[next]) == k {
			want = f.Row(next)
			next++
		}
		if !slices.Equal(s.Row(k), want) {
			t.Errorf("row %d: %v, want %v", k, s.Row(k), want)
		}
	}
	if same := f.Spread(3, []int32{0, 1, 2}); !slices.EqualFunc(featureRows(same), featureRows(f), slices.Equal) {
		t.Errorf("spread onto the same positions: %v, want %v", featureRows(same), featureRows(f))
	}
	if none := f.Spread(2, nil); none.Len() != 2 || none.NNZ() != 0 {
		t.Errorf("spread of no rows over 2: Len %d, NNZ %d", none.Len(), none.NNZ())
	}
}

func TestWithFeaturesSharesTheGraph(t *testing.T) {
	g := graph.New([]string{"e"}, []graph.Node{{Task: "a"}, {Task: "b"}}, [][]graph.Edge{{{To: 1, Weight: 0.5}}, {{To: 0, Weight: 0.5}}})
	f := graph.TextFeatures([]record.Task{{Text: "one"}, {Text: "two"}})
	h := g.WithFeatures(f)
	if g.Feat != nil || h.Feat != f {
		t.Errorf("WithFeatures changed the original (%v) or did not attach (%v)", g.Feat, h.Feat)
	}
	if h.Len() != 2 || h.NumEdges() != 2 || len(h.Neighbors(0)) != 1 || h.Neighbors(0)[0].To != 1 {
		t.Errorf("the copy lost nodes or edges: %d nodes, %d edges", h.Len(), h.NumEdges())
	}
}

func intersect(a, b []int32) []int32 {
	var out []int32
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); ok {
			out = append(out, x)
		}
	}
	return out
}
