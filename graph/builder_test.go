package graph_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/graph/graphtest"
	"github.com/envsched/envsched/record"
)

func task(env, id, text string, tools ...string) record.Task {
	return record.Task{Env: env, Task: id, Text: text, Tools: tools}
}

// filler returns n unrelated tasks of env, so that IDF has something to weigh against.
func filler(env string, n int, seed uint64) []record.Task {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([]record.Task, n)
	for i := range out {
		words := make([]string, 10)
		for w := range words {
			words[w] = fmt.Sprintf("%sw%d", env[:1], rng.IntN(2000))
		}
		out[i] = task(env, fmt.Sprintf("f%03d", i), fmt.Sprint(words), fmt.Sprintf("tool%d", rng.IntN(50)))
	}
	return out
}

// edgeOf returns the edge between two nodes of the snapshot by name.
func edgeOf(g *graph.Graph, a, b graph.NodeKey) (graph.Edge, bool) {
	i, j := nodeIndex(g, a), nodeIndex(g, b)
	if i < 0 || j < 0 {
		return graph.Edge{}, false
	}
	for _, e := range g.Neighbors(i) {
		if int(e.To) == j {
			return e, true
		}
	}
	return graph.Edge{}, false
}

func nodeIndex(g *graph.Graph, k graph.NodeKey) int {
	for i, n := range g.Nodes {
		if g.Envs[n.Env] == k.Env && n.Task == k.Task {
			return i
		}
	}
	return -1
}

func TestNearDuplicatesLinked(t *testing.T) {
	tasks := append(filler("alpha", 60, 1),
		task("alpha", "book1", "Book a flight from Paris to Rome on Monday for two adults", "book_flight"),
		task("alpha", "book2", "Book a flight from Paris to Rome on Tuesday for two adults", "book_flight"),
		task("alpha", "same", "Book a flight from Paris to Rome on Monday for two adults", "book_flight"),
	)
	b := graph.NewBuilder(graph.Options{})
	b.Add(tasks)
	g := b.Snapshot()
	for _, pair := range [][2]string{{"book1", "book2"}, {"book1", "same"}, {"book2", "same"}} {
		e, ok := edgeOf(g, graph.NodeKey{Env: "alpha", Task: pair[0]}, graph.NodeKey{Env: "alpha", Task: pair[1]})
		if !ok || e.Sim < 0.8 || e.Cross || e.Weight != e.Sim {
			t.Errorf("%s-%s: edge %+v present=%v, want an intra edge with Sim >= 0.8", pair[0], pair[1], e, ok)
		}
	}
	e, _ := edgeOf(g, graph.NodeKey{Env: "alpha", Task: "book1"}, graph.NodeKey{Env: "alpha", Task: "same"})
	if e.Sim < 0.999 {
		t.Errorf("identical tasks have Sim %v, want 1", e.Sim)
	}
}

func TestCrossEdgesStricterAndLighter(t *testing.T) {
	opt := graph.Options{MinSim: 0.2, MinSimCross: 0.6, CrossWeight: 0.5}
	base := "cancel the pending order of the user and refund the gift card balance"
	half := "cancel the pending order of the user and check the loyalty points history"
	tasks := slices.Concat(filler("alpha", 40, 2), filler("beta", 40, 3), []record.Task{
		task("alpha", "a", base, "cancel_pending_order"),
		task("alpha", "a-half", half),
		task("beta", "b-same", base, "cancel_pending_order"),
		task("beta", "b-half", half),
	})
	b := graph.NewBuilder(opt)
	b.Add(tasks)
	g := b.Snapshot()
	a := graph.NodeKey{Env: "alpha", Task: "a"}
	e, ok := edgeOf(g, a, graph.NodeKey{Env: "beta", Task: "b-same"})
	if !ok || !e.Cross || e.Sim < 0.99 || math.Abs(float64(e.Weight-0.5*e.Sim)) > 1e-6 {
		t.Fatalf("cross near-duplicate: edge %+v present=%v, want Cross with Weight = 0.5*Sim", e, ok)
	}
	intra, ok := edgeOf(g, a, graph.NodeKey{Env: "alpha", Task: "a-half"})
	if !ok || intra.Sim >= 0.6 {
		t.Fatalf("setup: the half-similar intra pair should be linked below the cross threshold, got %+v %v", intra, ok)
	}
	if e, ok := edgeOf(g, a, graph.NodeKey{Env: "beta", Task: "b-half"}); ok {
		t.Errorf("a cross edge of Sim %v was made below MinSimCross 0.6", e.Sim)
	}
	checkInvariants(t, g, b.Options())
}

// checkInvariants asserts what propagate and batcher rely on: sorted nodes and envs, no self
// or repeated edges, symmetric edges with equal Weight and Sim, Cross exactly across
// environments, thresholds and weights as configured, degrees bounded on average.
func checkInvariants(t *testing.T, g *graph.Graph, opt graph.Options) {
	t.Helper()
	if !slices.IsSorted(g.Envs) {
		t.Fatalf("envs not sorted: %v", g.Envs)
	}
	for i := 1; i < g.Len(); i++ {
		p, q := g.Nodes[i-1], g.Nodes[i]
		if p.Env > q.Env || (p.Env == q.Env && p.Task >= q.Task) {
			t.Fatalf("nodes %d and %d out of order", i-1, i)
		}
	}
	for i := range g.Len() {
		last := int32(-1)
		for _, e := range g.Neighbors(i) {
			checkEdge(t, g, opt, i, e, last)
			last = e.To
		}
	}
	if g.Len() > 0 {
		if mean := float64(g.NumEdges()) / float64(g.Len()); mean > 2*float64(opt.K+opt.KCross) {
			t.Errorf("mean degree %.1f above 2(K+KCross)", mean)
		}
	}
}

func checkEdge(t *testing.T, g *graph.Graph, opt graph.Options, i int, e graph.Edge, last int32) {
	t.Helper()
	if int(e.To) == i || e.To <= last {
		t.Fatalf("node %d: self, repeated or unsorted edge to %d", i, e.To)
	}
	if e.Weight <= 0 || e.Weight > 1 || e.Sim <= 0 || e.Sim > 1 {
		t.Fatalf("node %d: %+v out of (0, 1]", i, e)
	}
	cross := g.Nodes[i].Env != g.Nodes[e.To].Env
	want, min := e.Sim, float32(opt.MinSim)
	if cross {
		want, min = float32(opt.CrossWeight)*e.Sim, float32(opt.MinSimCross)
	}
	if e.Cross != cross || e.Weight != want || e.Sim < min {
		t.Fatalf("node %d: %+v breaks Cross, Weight or threshold rules", i, e)
	}
	back := false
	for _, r := range g.Neighbors(int(e.To)) {
		back = back || (int(r.To) == i && r.Weight == e.Weight && r.Sim == e.Sim)
	}
	if !back {
		t.Fatalf("edge %d->%d has no equal mirror", i, e.To)
	}
}

func TestPropertiesRandomCatalogues(t *testing.T) {
	for seed := range int64(5) {
		n := 100 + int(seed)*60
		opts := []graph.Options{{}, {K: 3, KCross: 2, MinSim: 0.1, MinSimCross: 0.3, MaxDF: 40}, {KCross: -1}}
		for oi, opt := range opts {
			t.Run(fmt.Sprintf("seed=%d/opt=%d", seed, oi), func(t *testing.T) {
				b := graph.NewBuilder(opt)
				b.Add(graphtest.Catalog(n, 1+int(seed)%5, seed))
				g := b.Snapshot()
				if g.Len() != n {
					t.Fatalf("Len %d, want %d", g.Len(), n)
				}
				checkInvariants(t, g, b.Options())
				if opt.KCross < 0 && countCross(g) > 0 {
					t.Fatalf("KCross < 0 yet %d cross edges", countCross(g))
				}
			})
		}
	}
}

func countCross(g *graph.Graph) int {
	c := 0
	for i := range g.Len() {
		for _, e := range g.Neighbors(i) {
			if e.Cross {
				c++
			}
		}
	}
	return c
}

// dump renders a graph by names, for comparing graphs whose nodes may differ in index.
func dump(g *graph.Graph) map[graph.NodeKey][]graph.NamedEdge {
	out := map[graph.NodeKey][]graph.NamedEdge{}
	for i, n := range g.Nodes {
		var es []graph.NamedEdge
		for _, e := range g.Neighbors(i) {
			m := g.Nodes[e.To]
			es = append(es, graph.NamedEdge{Env: g.Envs[m.Env], Task: m.Task, Weight: e.Weight, Sim: e.Sim, Cross: e.Cross})
		}
		out[graph.NodeKey{Env: g.Envs[n.Env], Task: n.Task}] = es
	}
	return out
}

func sameDump(a, b map[graph.NodeKey][]graph.NamedEdge) bool {
	if len(a) != len(b) {
		return false
	}
	for k, ea := range a {
		eb, ok := b[k]
		if !ok || !slices.Equal(ea, eb) {
			return false
		}
	}
	return true
}

func TestDeterministicAnyOrder(t *testing.T) {
	tasks := graphtest.Catalog(700, 4, 11)
	one := graph.NewBuilder(graph.Options{})
	one.Add(tasks)
	want := dump(one.Snapshot())
	for seed := range uint64(3) {
		shuffled := slices.Clone(tasks)
		rand.New(rand.NewPCG(seed, 1)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		b := graph.NewBuilder(graph.Options{Workers: 1 + int(seed)})
		b.Add(shuffled)
		if !sameDump(want, dump(b.Snapshot())) {
			t.Fatalf("order %d gave a different graph", seed)
		}
	}
}

func TestIncrementalAdd(t *testing.T) {
	tasks := graphtest.Catalog(1200, 4, 5)
	whole := graph.NewBuilder(graph.Options{})
	whole.Add(tasks)
	want := dump(whole.Snapshot())

	t.Run("second part triggers a full build: equal", func(t *testing.T) {
		b := graph.NewBuilder(graph.Options{})
		b.Add(tasks[:800])
		b.Add(tasks[800:])
		if !sameDump(want, dump(b.Snapshot())) {
			t.Fatal("two Adds differ from one Add")
		}
	})
	t.Run("small second part: close", func(t *testing.T) {
		b := graph.NewBuilder(graph.Options{})
		b.Add(tasks[:1160])
		b.Add(tasks[1160:])
		got := dump(b.Snapshot())
		if r := edgeRecall(want, got); r < 0.9 {
			t.Fatalf("incremental graph keeps %.3f of the edges of one Add, want >= 0.9", r)
		}
		again := graph.NewBuilder(graph.Options{})
		again.Add(tasks[:1160])
		again.Add(tasks[1160:])
		if !sameDump(got, dump(again.Snapshot())) {
			t.Fatal("the same sequence of Adds gave different graphs")
		}
	})
}

// edgeRecall is the share of the edges of want (by names) that got has.
func edgeRecall(want, got map[graph.NodeKey][]graph.NamedEdge) float64 {
	total, kept := 0, 0
	for k, es := range want {
		have := map[graph.NodeKey]bool{}
		for _, e := range got[k] {
			have[graph.NodeKey{Env: e.Env, Task: e.Task}] = true
		}
		for _, e := range es {
			total++
			if have[graph.NodeKey{Env: e.Env, Task: e.Task}] {
				kept++
			}
		}
	}
	return float64(kept) / float64(max(total, 1))
}

func TestChangedReportsExactlyTheChangedAdjacency(t *testing.T) {
	tasks := graphtest.Catalog(1000, 4, 8)
	b := graph.NewBuilder(graph.Options{})
	b.Add(tasks[:970])
	before := adjacencies(b, tasks)
	changed := b.Add(tasks[970:])
	after := adjacencies(b, tasks)
	if !slices.IsSortedFunc(changed, cmpKey) {
		t.Fatal("changed keys not sorted")
	}
	reported := map[graph.NodeKey]bool{}
	for _, k := range changed {
		reported[k] = true
	}
	for _, tk := range tasks {
		k := graph.NodeKey{Env: tk.Env, Task: tk.Task}
		isNew := slices.ContainsFunc(tasks[970:], func(x record.Task) bool { return x.Env == k.Env && x.Task == k.Task })
		differs := !slices.Equal(before[k], after[k])
		if (isNew || differs) != reported[k] {
			t.Errorf("%v: new=%v adjacency changed=%v but reported=%v", k, isNew, differs, reported[k])
		}
	}
	if len(changed) <= 30 {
		t.Errorf("only %d changed nodes: existing neighbours of new tasks should change too", len(changed))
	}
	if again := b.Add(tasks[970:]); len(again) != 0 {
		t.Errorf("re-adding unchanged tasks reported %d changes", len(again))
	}
	checkInvariants(t, b.Snapshot(), b.Options())
}

func cmpKey(a, b graph.NodeKey) int {
	if a.Env != b.Env {
		return map[bool]int{true: -1, false: 1}[a.Env < b.Env]
	}
	if a.Task != b.Task {
		return map[bool]int{true: -1, false: 1}[a.Task < b.Task]
	}
	return 0
}

func adjacencies(b *graph.Builder, tasks []record.Task) map[graph.NodeKey][]graph.NamedEdge {
	out := map[graph.NodeKey][]graph.NamedEdge{}
	for _, t := range tasks {
		k := graph.NodeKey{Env: t.Env, Task: t.Task}
		out[k] = b.Adjacency(k)
	}
	return out
}

func TestAdjacencyMatchesSnapshot(t *testing.T) {
	tasks := graphtest.Catalog(800, 3, 4)
	b := graph.NewBuilder(graph.Options{})
	b.Add(tasks)
	snap := dump(b.Snapshot())
	for k, es := range snap {
		if !slices.Equal(es, b.Adjacency(k)) && !(len(es) == 0 && b.Adjacency(k) == nil) {
			t.Fatalf("%v: Adjacency %v, snapshot %v", k, b.Adjacency(k), es)
		}
	}
	if b.Adjacency(graph.NodeKey{Env: "nope", Task: "x"}) != nil || b.Linked(graph.NodeKey{Env: "nope", Task: "x"}) {
		t.Fatal("unknown node has adjacency")
	}
	// Linked says whether Adjacency is not empty, also after a task loses its description.
	b.Add([]record.Task{{Env: tasks[0].Env, Task: tasks[0].Task}})
	linked, lone := 0, 0
	for _, tk := range tasks {
		k := graph.NodeKey{Env: tk.Env, Task: tk.Task}
		if b.Linked(k) != (len(b.Adjacency(k)) > 0) {
			t.Fatalf("%v: Linked %v, %d neighbours", k, b.Linked(k), len(b.Adjacency(k)))
		}
		if b.Linked(k) {
			linked++
		} else {
			lone++
		}
	}
	if linked == 0 || lone == 0 {
		t.Fatalf("%d linked and %d lone nodes: both kinds must be checked", linked, lone)
	}
}

func TestEmbeddingIsUsed(t *testing.T) {
	emb := func(x ...float32) []float32 { return x }
	text := "identical words in every task"
	tasks := []record.Task{
		{Env: "e", Task: "a", Text: text, Embedding: emb(1, 0, 0, 0)},
		{Env: "e", Task: "b", Text: text, Embedding: emb(0.95, 0.3, 0, 0)},
		{Env: "e", Task: "c", Text: text, Embedding: emb(0, 0, 1, 0)},
		{Env: "e", Task: "d", Embedding: emb(0, 0, 0.9, 0.1)},
	}
	b := graph.NewBuilder(graph.Options{})
	b.Add(tasks)
	g := b.Snapshot()
	key := func(s string) graph.NodeKey { return graph.NodeKey{Env: "e", Task: s} }
	e, ok := edgeOf(g, key("a"), key("b"))
	wantSim := float32(0.95 / math.Sqrt(0.95*0.95+0.09))
	if !ok || math.Abs(float64(e.Sim-wantSim)) > 1e-5 {
		t.Errorf("a-b: %+v %v, want Sim %.4f from the embeddings", e, ok, wantSim)
	}
	if e, ok := edgeOf(g, key("a"), key("c")); ok {
		t.Errorf("a-c have orthogonal embeddings but an edge %+v (text was used)", e)
	}
	if _, ok := edgeOf(g, key("c"), key("d")); !ok {
		t.Error("c-d: a task with only an embedding is not linked")
	}
}

func TestTasksWithoutDescription(t *testing.T) {
	b := graph.NewBuilder(graph.Options{})
	changed := b.Add([]record.Task{{Env: "e", Task: "r1"}, {Env: "e", Task: "r2"}, {Env: "f", Task: "r3", Text: "  ,, "}})
	if len(changed) != 3 {
		t.Fatalf("changed %v, want the 3 new nodes", changed)
	}
	g := b.Snapshot()
	if g.Len() != 3 || g.NumEdges() != 0 || !slices.Equal(g.Envs, []string{"e", "f"}) {
		t.Fatalf("graph of undescribed tasks: %d nodes, %d edges, envs %v", g.Len(), g.NumEdges(), g.Envs)
	}
	// The catalogue describes r1 and r2 later: they become alike and linked.
	b.Add([]record.Task{
		task("e", "r1", "reset the router and check the signal strength", "reset_router"),
		task("e", "r2", "reset the router and check the signal quality", "reset_router"),
	})
	if _, ok := edgeOf(b.Snapshot(), graph.NodeKey{Env: "e", Task: "r1"}, graph.NodeKey{Env: "e", Task: "r2"}); !ok {
		t.Fatal("described tasks are not linked")
	}
	if len(b.Add(nil)) != 0 || graph.NewBuilder(graph.Options{}).Snapshot().Len() != 0 {
		t.Fatal("empty Add or empty builder is not empty")
	}
}

func TestUpdatedDescriptionReplacesEdges(t *testing.T) {
	tasks := append(filler("e", 30, 9),
		task("e", "x", "transfer money between two checking accounts", "transfer"),
		task("e", "y", "transfer money between two checking accounts today", "transfer"),
	)
	b := graph.NewBuilder(graph.Options{})
	b.Add(tasks)
	x, y := graph.NodeKey{Env: "e", Task: "x"}, graph.NodeKey{Env: "e", Task: "y"}
	if _, ok := edgeOf(b.Snapshot(), x, y); !ok {
		t.Fatal("setup: x and y not linked")
	}
	changed := b.Add([]record.Task{task("e", "y", "paint the fence green", "paint")})
	if !slices.Contains(changed, x) || !slices.Contains(changed, y) {
		t.Fatalf("changed %v lacks x and y", changed)
	}
	if e, ok := edgeOf(b.Snapshot(), x, y); ok {
		t.Fatalf("x and y still linked after y changed: %+v", e)
	}
	checkInvariants(t, b.Snapshot(), b.Options())
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  graph.Options
		ok   bool
	}{
		{"zero is defaults", graph.Options{}, true},
		{"negative K disables", graph.Options{K: -1, KCross: -1}, true},
		{"MinSim above 1", graph.Options{MinSim: 1.5}, false},
		{"negative MinSimCross", graph.Options{MinSimCross: -0.1}, false},
		{"CrossWeight above 1", graph.Options{CrossWeight: 2}, false},
		{"negative MaxDF", graph.Options{MaxDF: -3}, false},
		{"negative ToolWeight", graph.Options{ToolWeight: -1}, false},
		{"negative RefreshGrowth", graph.Options{RefreshGrowth: -1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opt.Validate()
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, graph.ErrOptions)) {
				t.Fatalf("Validate() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
	d := graph.DefaultOptions()
	if d.K != graph.DefaultK || d.KCross != graph.DefaultKCross || d.MinSimCross <= d.MinSim || d.CrossWeight >= 1 {
		t.Fatalf("defaults %+v", d)
	}
}

func TestEmbeddingNearDuplicatesFoundAtScale(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	vec := func() []float32 {
		v := make([]float32, 32)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	var tasks []record.Task
	for i := range 600 {
		tasks = append(tasks, record.Task{Env: fmt.Sprintf("e%d", i%3), Task: fmt.Sprintf("t%03d", i), Embedding: vec()})
	}
	for i := range 40 {
		v := slices.Clone(tasks[i].Embedding)
		for j := range v {
			v[j] += 0.1 * float32(rng.NormFloat64())
		}
		tasks = append(tasks, record.Task{Env: tasks[i].Env, Task: fmt.Sprintf("dup%02d", i), Embedding: v})
	}
	b := graph.NewBuilder(graph.Options{})
	b.Add(tasks)
	g := b.Snapshot()
	for i := range 40 {
		a := graph.NodeKey{Env: tasks[i].Env, Task: tasks[i].Task}
		e, ok := edgeOf(g, a, graph.NodeKey{Env: tasks[i].Env, Task: fmt.Sprintf("dup%02d", i)})
		if !ok || e.Sim < 0.9 {
			t.Errorf("planted near-duplicate %d: edge %+v present=%v", i, e, ok)
		}
	}
	checkInvariants(t, g, b.Options())
}

// The hyperplanes of the LSH buckets, drawn per embedding length (lshBands·lshBits·length
// values each), are held within a bound for all lengths together: a 4 MB catalogue of ten
// rows with embeddings of ten lengths near 200,000 made the builder hold 3 GB of them. Lengths
// met past the bound are not bucketed; the embeddings of a length bucketed first still find
// their near-duplicates.
func TestHyperplanesOfManyLengthsAreBounded(t *testing.T) {
	const bound = 192 * 40 // one length of 32 fits, a second does not
	graph.SetMaxPlaneFloats(t, bound)
	rng := rand.New(rand.NewPCG(4, 4))
	vec := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	var tasks []record.Task
	for i := range 300 {
		tasks = append(tasks, record.Task{Env: "a", Task: fmt.Sprintf("t%03d", i), Embedding: vec(32)})
	}
	for i := range 20 {
		v := slices.Clone(tasks[i].Embedding)
		for j := range v {
			v[j] += 0.1 * float32(rng.NormFloat64())
		}
		tasks = append(tasks, record.Task{Env: "a", Task: fmt.Sprintf("dup%02d", i), Embedding: v})
	}
	for n := 33; n < 233; n++ { // "b" sorts after "a": indexed after the first length, in a full build
		tasks = append(tasks, record.Task{Env: "b", Task: fmt.Sprintf("len%d", n), Embedding: vec(n)})
	}
	b := graph.NewBuilder(graph.Options{})
	b.Add(tasks)
	if held := graph.PlaneFloats(b); held > bound {
		t.Errorf("the index holds %d hyperplane values for %d embedding lengths; want at most %d", held, 201, bound)
	}
	g := b.Snapshot()
	for i := range 20 {
		a := graph.NodeKey{Env: "a", Task: tasks[i].Task}
		if e, ok := edgeOf(g, a, graph.NodeKey{Env: "a", Task: fmt.Sprintf("dup%02d", i)}); !ok || e.Sim < 0.9 {
			t.Errorf("planted near-duplicate %d: edge %+v present=%v", i, e, ok)
		}
	}
	checkInvariants(t, g, b.Options())
	if err := graph.CheckIndex(b); err != nil {
		t.Error(err)
	}
}
