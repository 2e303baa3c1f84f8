package schedule

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/internal/par"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/stats"
	"github.com/envsched/envsched/storage"
)

// BuildGraph builds the graph of a catalogue when the database stores no edges. It must
// return a graph whose nodes are exactly the given tasks (sorted by environment, then task)
// and must depend only on the set of tasks, so that every process builds the same graph.
type BuildGraph func(tasks []record.Task) *graph.Graph

// state is what a request is answered from: one consistent read of the database.
type state struct {
	g        *graph.Graph
	tasks    []stats.Task // indexed like g.Nodes
	counters storage.Counters
	lastStep int64 // step of the last answered request, 0 when none
	// retired marks the nodes of tasks the latest catalogue no longer lists (nil when none):
	// they keep their place in the graph and their history, and are never chosen.
	retired []bool
}

// find returns the node of (env, task) in st's graph.
func (st *state) find(env, task string) (int, bool) {
	e, ok := slices.BinarySearch(st.g.Envs, env)
	if !ok {
		return 0, false
	}
	return slices.BinarySearchFunc(st.g.Nodes, graph.Node{Env: int32(e), Task: task}, func(a, b graph.Node) int {
		if c := cmp.Compare(a.Env, b.Env); c != 0 {
			return c
		}
		return cmp.Compare(a.Task, b.Task)
	})
}

// loader reads states and keeps the graph between reads while the set of described tasks
// stays. Tasks first seen in rollouts have no catalogue row, hence no description and no
// edges: when only such tasks are new, the graph grows by isolated nodes instead of being
// built again (the result is the same, as edges depend only on the described tasks).
//
// With a Follower, the loader reads every task once and then keeps the statistics in memory,
// updated from the task records the database's own commits wrote since the last load (a
// request then costs what changed, not the catalogue); without, it reads every task at every
// load. Both give the same state (a test compares them after random commits).
type loader struct {
	db     *storage.DB
	build  BuildGraph
	follow *storage.Follower // nil: read every task at every load
	g      *graph.Graph
	// catalog is the number of tasks with a catalogue row behind g
	catalog int
	tasks   []stats.Task // indexed like g.Nodes
	inCats  []bool       // per node: a catalogue row was seen for it (with a Follower)
	inCat   int          // tasks with a catalogue row, as of the last load
	// edgeWrites is the storage counter of adjacency lists written when g was read: when it
	// moves (a task described or reworded), g is read again.
	edgeWrites int64
	// catalogWrites is the storage counter of replaced descriptions when g's features were
	// read: when it moves (a task reworded, with or without edges to write), g is read again.
	catalogWrites int64
	// index finds g's nodes by name for update (built at the first update of a graph)
	index nodeIndex
	// early, while a load reads a graph from scratch, returns the features read beside it
	// (storage.Reader.Beside) once they are read; nil otherwise
	early func() (*graph.Features, int, error)
}

// load reads counters and every task's statistics (or, with a Follower, those that changed)
// in one read transaction, and the graph again when the set of tasks changed.
func (l *loader) load() (*state, error) {
	st := &state{}
	read := func(r *storage.Reader, changed []storage.TaskInfo, all bool) error {
		var err error
		if st.counters, err = r.Counters(); err != nil {
			return err
		}
		var names []storage.TaskKey
		kept := false // the nodes are g's
		whole := all || l.g == nil
		if whole && l.g == nil {
			// a graph read from scratch needs the features of every row: they are read
			// beside the tasks and the edges, from the same snapshot (withFeatures takes them)
			var f *graph.Features
			var n int
			wait := r.Beside(func(r *storage.Reader) (err error) {
				f, n, err = readFeatures(r)
				return err
			})
			l.early = func() (*graph.Features, int, error) { return f, n, wait() }
			defer func() {
				if l.early != nil { // not taken: waited for all the same, before the read ends
					l.early()
					l.early = nil
				}
			}()
		}
		if whole {
			if names, err = l.readTasks(r); err != nil {
				return err
			}
			kept = l.sameNodes(names)
		} else {
			names, kept = l.update(changed)
		}
		if err = l.graphFor(r, st.counters, names, kept); err != nil {
			return err
		}
		if st.lastStep, err = lastStep(r, st.counters); err != nil {
			return err
		}
		st.retired, err = retiredNodes(r, l.g)
		if whole {
			r.ReleasePages() // it read every task: pages it will not read again
		}
		return err
	}
	var err error
	if l.follow != nil {
		err = l.follow.View(read)
	} else {
		err = l.db.View(func(r *storage.Reader) error { return read(r, nil, true) })
	}
	if err != nil {
		l.g = nil // half updated: read everything again next time
		return nil, fmt.Errorf("load state from %s: %w", l.db.Path(), err)
	}
	st.g, st.tasks = l.g, l.tasks
	return st, nil
}

// graphFor makes l.g the graph of the stored tasks: names, or g's own nodes when kept. It
// keeps g when neither the described tasks nor the stored edges and descriptions moved, grows it by isolated nodes when only tasks without a description were added, and
// reads it again otherwise.
func (l *loader) graphFor(r *storage.Reader, c storage.Counters, names []storage.TaskKey, kept bool) error {
	same := l.g != nil && l.inCat == l.catalog && c.EdgeWrites == l.edgeWrites &&
		c.CatalogWrites == l.catalogWrites
	var err error
	switch {
	case same && kept:
	case same && len(names) > l.g.Len():
		if l.g, err = grow(l.g, names); errors.Is(err, errShrunk) {
			l.g, err = l.readGraph(r, names)
		}
	default:
		if kept {
			names = keysOf(l.g)
		}
		l.g, err = l.readGraph(r, names)
	}
	if err == nil && l.g.Feat == nil {
		l.g, err = l.withFeatures(r, l.g)
	}
	if err != nil {
		return err
	}
	l.catalog, l.edgeWrites, l.catalogWrites = l.inCat, c.EdgeWrites, c.CatalogWrites
	return nil
}

// keysOf returns the names of g's nodes, in node order.
func keysOf(g *graph.Graph) []storage.TaskKey {
	out := make([]storage.TaskKey, g.Len())
	for i, nd := range g.Nodes {
		out[i] = storage.TaskKey{Env: g.Envs[nd.Env], Task: nd.Task}
	}
	return out
}

// retiredNodes marks, in node order, the nodes of g whose tasks storage has retired; nil when
// none is.
func retiredNodes(r *storage.Reader, g *graph.Graph) ([]bool, error) {
	ret, err := r.Retired()
	if err != nil || len(ret) == 0 {
		return nil, err
	}
	return retiredMask(g, ret), nil
}

// retiredMask marks the nodes of g named in ret. A few retired tasks are found by binary
// search, so that a request costs what is retired, not the catalogue; many, by a pass over
// the nodes. Both give the same mask.
func retiredMask(g *graph.Graph, ret map[storage.TaskKey]bool) []bool {
	mask := make([]bool, g.Len())
	if len(ret) > g.Len()/16 {
		for i, nd := range g.Nodes {
			mask[i] = ret[storage.TaskKey{Env: g.Envs[nd.Env], Task: nd.Task}]
		}
		return mask
	}
	st := state{g: g}
	for k, on := range ret {
		if i, ok := st.find(k.Env, k.Task); ok && on {
			mask[i] = true
		}
	}
	return mask
}

// readTasks reads every task's statistics into l.tasks, in storage order (environment, then
// task, byte order: the order of graph nodes), and returns their names.
func (l *loader) readTasks(r *storage.Reader) ([]storage.TaskKey, error) {
	l.tasks, l.inCats, l.inCat = l.tasks[:0], l.inCats[:0], 0
	// sized at once by the environments' task counts (only a hint): grown by appends, the
	// copies and the garbage of 100,000 tasks' statistics were an eighth of a start's CPU
	n := taskHint(r)
	l.tasks, l.inCats = slices.Grow(l.tasks, n), slices.Grow(l.inCats, n)
	names := make([]storage.TaskKey, 0, n) // not kept: the graph's nodes name the tasks after the load
	err := r.Tasks(false, func(ti storage.TaskInfo) error {
		if ti.InCatalog {
			l.inCat++
		}
		names = append(names, storage.TaskKey{Env: ti.Env, Task: ti.Task.Task})
		l.tasks = append(l.tasks, ti.Stats)
		l.inCats = append(l.inCats, ti.InCatalog)
		return nil
	})
	return names, err
}

// update applies the records of changed tasks to l.tasks and l.inCats (nodes of l.g). It
// reports kept when every changed task is a node of l.g; otherwise it returns the names of all
// tasks, g's and the new ones, with l.tasks and l.inCats laid out in their order.
func (l *loader) update(changed []storage.TaskInfo) (names []storage.TaskKey, kept bool) {
	index := l.index.of(l.g)
	var added []storage.TaskInfo
	for _, ti := range changed {
		i, ok := index.find(ti.Env, ti.Task.Task)
		if !ok {
			added = append(added, ti)
			continue
		}
		if ti.InCatalog != l.inCats[i] {
			l.inCat += boolDelta(ti.InCatalog)
		}
		l.tasks[i], l.inCats[i] = ti.Stats, ti.InCatalog
	}
	if len(added) == 0 {
		return nil, true
	}
	slices.SortFunc(added, func(a, b storage.TaskInfo) int {
		return compareKey(storage.TaskKey{Env: a.Env, Task: a.Task.Task}, storage.TaskKey{Env: b.Env, Task: b.Task.Task})
	})
	return l.merge(added), false
}

// merge lays out l.tasks and l.inCats for g's nodes and the added tasks (sorted, none a node
// of g) in storage order, and returns the names of them all.
func (l *loader) merge(added []storage.TaskInfo) []storage.TaskKey {
	n := l.g.Len() + len(added)
	names := make([]storage.TaskKey, 0, n)
	tasks := make([]stats.Task, 0, n)
	inCats := make([]bool, 0, n)
	i := 0
	for _, ti := range added {
		key := storage.TaskKey{Env: ti.Env, Task: ti.Task.Task}
		for ; i < l.g.Len(); i++ {
			nd := l.g.Nodes[i]
			old := storage.TaskKey{Env: l.g.Envs[nd.Env], Task: nd.Task}
			if compareKey(old, key) > 0 {
				break
			}
			names, tasks, inCats = append(names, old), append(tasks, l.tasks[i]), append(inCats, l.inCats[i])
		}
		names, tasks, inCats = append(names, key), append(tasks, ti.Stats), append(inCats, ti.InCatalog)
		if ti.InCatalog {
			l.inCat++
		}
	}
	for ; i < l.g.Len(); i++ {
		nd := l.g.Nodes[i]
		names = append(names, storage.TaskKey{Env: l.g.Envs[nd.Env], Task: nd.Task})
		tasks, inCats = append(tasks, l.tasks[i]), append(inCats, l.inCats[i])
	}
	l.tasks, l.inCats = tasks, inCats
	return names
}

func boolDelta(b bool) int {
	if b {
		return 1
	}
	return -1
}

// withFeatures attaches to g the catalogue features of its nodes (graph.TextFeatures of the
// stored rows, in storage order), which the predictor's feature prior reads. The rows stream
// through a graph.FeatureBuilder: only a block of them is held at a time.
// When the load began features beside (loader.early), they are taken instead of read again.
func (l *loader) withFeatures(r *storage.Reader, g *graph.Graph) (*graph.Graph, error) {
	var f *graph.Features
	var n int
	var err error
	if l.early != nil {
		f, n, err = l.early()
		l.early = nil
	} else {
		f, n, err = readFeatures(r)
	}
	if err != nil {
		return nil, err
	}
	if n != g.Len() {
		return nil, fmt.Errorf("%d stored tasks for a graph of %d nodes", n, g.Len())
	}
	return g.WithFeatures(f), nil
}

// taskHint is the number of stored tasks as the environments' statistics count them (0 when
// they cannot be read): a capacity, never trusted as the count.
func taskHint(r *storage.Reader) int {
	envs, err := r.Envs()
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range envs {
		n += max(e.Tasks, 0)
	}
	return int(min(n, 1<<24))
}

// readFeatures returns the features of every stored task's catalogue row, in storage order,
// and the number of tasks.
func readFeatures(r *storage.Reader) (*graph.Features, int, error) {
	b := graph.NewFeatureBuilder(taskHint(r))
	n := 0
	err := r.Tasks(true, func(ti storage.TaskInfo) error {
		b.Add(ti.Task)
		n++
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return b.Features(), n, nil
}

// storedRows reads the catalogue row of every stored task, in storage order (the order of
// graph nodes); n is the expected count.
func storedRows(r *storage.Reader, n int) ([]record.Task, error) {
	rows := make([]record.Task, 0, n)
	err := r.Tasks(true, func(ti storage.TaskInfo) error {
		rows = append(rows, ti.Task)
		return nil
	})
	return rows, err
}

// sameNodes reports whether the cached graph has exactly these nodes.
func (l *loader) sameNodes(names []storage.TaskKey) bool {
	if l.g == nil || l.g.Len() != len(names) {
		return false
	}
	for i, nd := range l.g.Nodes {
		if nd.Task != names[i].Task || l.g.Envs[nd.Env] != names[i].Env {
			return false
		}
	}
	return true
}

// readGraph makes the graph of the named nodes: from the stored edges, or, when none are
// stored, from BuildGraph over the catalogue, or else with no edges (environment priors only).
func (l *loader) readGraph(r *storage.Reader, names []storage.TaskKey) (*graph.Graph, error) {
	envs, nodes := nodesOf(names)
	off, edges, err := readEdges(r, names)
	// with no catalogue row stored there is no text to link tasks by: a build would read every
	// task and link none (a database fed rollouts alone: 0.1 s of a restart's first answer at
	// 20,000 tasks)
	if err != nil || len(edges) > 0 || l.build == nil || l.inCat == 0 {
		return graph.NewCSR(envs, nodes, off, edges), err
	}
	return l.buildGraph(r, envs, nodes, names)
}

// readEdges reads the stored edges between the named nodes (sorted) in compressed sparse rows:
// the edges of node i are edges[off[i]:off[i+1]], in stored order. Edges to a node that is not
// named, and to the node itself, are left out. The lists are read as views (no string copied)
// into arrays sized by a first pass that reads their lengths only.
func readEdges(r *storage.Reader, names []storage.TaskKey) ([]int32, []graph.Edge, error) {
	total, err := r.EdgeTotal()
	if err != nil {
		return nil, nil, err
	}
	index := newNameIndex(names)
	from := make([]int32, 0, total) // node of each edge
	edges := make([]graph.Edge, 0, total)
	sorted := true
	// The names are looked up a chunk of lists at a time, on every CPU (a lookup is a few
	// cache misses, a third of a 100k start's serial work when done one by one), then the
	// found edges are kept in the lists' order, as a lookup one by one keeps them.
	var c edgeChunk
	flush := func() {
		c.resolve(index)
		for l, node := range c.from {
			lo, hi := c.ends[l], c.ends[l+1]
			if node < 0 {
				continue
			}
			if n := len(from); n > 0 && from[n-1] > node {
				sorted = false
			}
			for k := lo; k < hi; k++ {
				if j := c.to[k]; j >= 0 && j != node {
					e := c.edges[k]
					from = append(from, node)
					edges = append(edges, graph.Edge{To: j, Weight: e.Weight, Sim: e.Sim, Cross: e.Cross})
				}
			}
		}
		c.reset()
	}
	err = r.EdgeViews(func(node storage.TaskKey, list []storage.Edge) error {
		c.add(node, list)
		if len(c.edges) >= edgeChunkSize {
			flush()
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	flush()
	if !sorted { // lists come by node key, the order of names; this keeps any other order right
		sortByNode(from, edges)
	}
	return edgeOffsets(from, len(names)), edges, nil
}

// edgeOffsets is where each of n nodes' edges begin, from the node of each edge (sorted by
// node): off[i] to off[i+1].
func edgeOffsets(from []int32, n int) []int32 {
	off := make([]int32, n+1)
	for _, i := range from {
		off[i+1]++
	}
	for i := range n {
		off[i+1] += off[i]
	}
	return off
}

// edgeChunkSize is how many stored edges readEdges looks up together.
const edgeChunkSize = 1 << 15

// edgeChunk is a run of stored adjacency lists whose names are still to be looked up: the
// lists' nodes, and their edges one after another (list l's are edges[ends[l]:ends[l+1]]).
// The names are views into the database, valid while its read transaction is (storage's
// EdgeViews reuses only the slice it hands over).
type edgeChunk struct {
	nodes []storage.TaskKey
	ends  []int
	edges []storage.Edge
	from  []int32 // after resolve: each list's node, −1 when not named
	to    []int32 // after resolve: each edge's neighbour, −1 when not named
}

func (c *edgeChunk) add(node storage.TaskKey, list []storage.Edge) {
	if len(c.ends) == 0 {
		c.ends = append(c.ends, 0)
	}
	c.nodes = append(c.nodes, node)
	c.edges = append(c.edges, list...)
	c.ends = append(c.ends, len(c.edges))
}

func (c *edgeChunk) reset() {
	clear(c.nodes) // drop the views
	clear(c.edges)
	c.nodes, c.ends, c.edges = c.nodes[:0], c.ends[:0], c.edges[:0]
}

// resolve looks every name of the chunk up in index, on every CPU.
func (c *edgeChunk) resolve(index nameIndex) {
	c.from, c.to = slices.Grow(c.from[:0], len(c.nodes))[:len(c.nodes)], slices.Grow(c.to[:0], len(c.edges))[:len(c.edges)]
	find := func(env, task string) int32 {
		if i, ok := index.find(env, task); ok {
			return int32(i)
		}
		return -1
	}
	par.Ranges(len(c.edges), 4096, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			c.to[k] = find(c.edges[k].Env, c.edges[k].Task)
		}
	})
	for l, node := range c.nodes {
		c.from[l] = find(node.Env, node.Task)
	}
}

// sortByNode orders edges by from, stably, keeping from in step.
func sortByNode(from []int32, edges []graph.Edge) {
	perm := make([]int, len(from))
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(a, b int) int { return cmp.Compare(from[a], from[b]) })
	f, e := slices.Clone(from), slices.Clone(edges)
	for k, p := range perm {
		from[k], edges[k] = f[p], e[p]
	}
}

// buildGraph builds the graph from the catalogue and maps it onto the stored nodes by name.
func (l *loader) buildGraph(r *storage.Reader, envs []string, nodes []graph.Node, names []storage.TaskKey) (*graph.Graph, error) {
	rows, err := storedRows(r, len(names))
	if err != nil {
		return nil, err
	}
	built := l.build(rows)
	adj := make([][]graph.Edge, len(names))
	for i := range built.Nodes {
		from, ok := builtIndex(built, i, names)
		if !ok {
			continue
		}
		for _, e := range built.Neighbors(i) {
			if to, ok := builtIndex(built, int(e.To), names); ok {
				adj[from] = append(adj[from], graph.Edge{To: int32(to), Weight: e.Weight, Sim: e.Sim, Cross: e.Cross})
			}
		}
	}
	// the rows are at hand: attach the features here rather than read them again
	return graph.New(envs, nodes, adj).WithFeatures(graph.TextFeatures(rows)), nil
}

func builtIndex(g *graph.Graph, i int, names []storage.TaskKey) (int, bool) {
	nd := g.Nodes[i]
	return slices.BinarySearchFunc(names, storage.TaskKey{Env: g.Envs[nd.Env], Task: nd.Task}, compareKey)
}

func compareKey(a, b storage.TaskKey) int {
	if c := cmp.Compare(a.Env, b.Env); c != 0 {
		return c
	}
	return cmp.Compare(a.Task, b.Task)
}

// nodesOf turns sorted names into the environments and nodes of a graph.
func nodesOf(names []storage.TaskKey) ([]string, []graph.Node) {
	var envs []string
	nodes := make([]graph.Node, len(names))
	for i, k := range names {
		if len(envs) == 0 || envs[len(envs)-1] != k.Env {
			envs = append(envs, k.Env)
		}
		nodes[i] = graph.Node{Env: int32(len(envs) - 1), Task: k.Task}
	}
	return envs, nodes
}

// errShrunk means a cached graph has a node that the database no longer has: tasks are never
// removed, so it is a sign of another database behind the same loader.
var errShrunk = errors.New("a task of the cached graph is no longer stored")

// grow returns g with isolated nodes added so that its nodes are names (a superset of g's,
// both sorted by environment, then task); the edges are g's, renumbered.
func grow(g *graph.Graph, names []storage.TaskKey) (*graph.Graph, error) {
	envs, nodes := nodesOf(names)
	pos := make([]int32, g.Len()) // new index of each old node
	j := 0
	for i, nd := range g.Nodes {
		key := storage.TaskKey{Env: g.Envs[nd.Env], Task: nd.Task}
		for j < len(names) && compareKey(names[j], key) < 0 {
			j++
		}
		if j == len(names) || names[j] != key {
			return nil, errShrunk
		}
		pos[i] = int32(j)
	}
	off := make([]int32, len(names)+1)
	edges := make([]graph.Edge, 0, g.NumEdges())
	next := 0
	for k := range names {
		if next < g.Len() && int(pos[next]) == k {
			for _, e := range g.Neighbors(next) {
				e.To = pos[e.To]
				edges = append(edges, e)
			}
			next++
		}
		off[k+1] = int32(len(edges))
	}
	grown := graph.NewCSR(envs, nodes, off, edges)
	if g.Feat != nil {
		grown = grown.WithFeatures(g.Feat.Spread(len(names), pos))
	}
	return grown, nil
}
