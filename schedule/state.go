package schedule

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/envsched/envsched/graph"
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
type loader struct {
	db      *storage.DB
	build   BuildGraph
	g       *graph.Graph
	catalog int // tasks with a catalogue row behind g
	tasks   []stats.Task
	names   []storage.TaskKey // buffer of readTasks
	inCat   int               // tasks with a catalogue row, counted by readTasks
	// edgeWrites is the storage counter of adjacency lists written when g was read: when it
	// moves (a task described or reworded), g is read again.
	edgeWrites int64
	// catalogWrites is the storage counter of replaced descriptions when g's features were
	// read: when it moves (a task reworded, with or without edges to write), g is read again.
	catalogWrites int64
}

// load reads counters and every task's statistics in one read transaction, and the graph
// again when the set of tasks changed.
func (l *loader) load() (*state, error) {
	st := &state{}
	var names []storage.TaskKey
	err := l.db.View(func(r *storage.Reader) error {
		var err error
		if st.counters, err = r.Counters(); err != nil {
			return err
		}
		if names, err = l.readTasks(r); err != nil {
			return err
		}
		same := l.inCat == l.catalog && st.counters.EdgeWrites == l.edgeWrites &&
			st.counters.CatalogWrites == l.catalogWrites
		switch {
		case same && l.sameNodes(names):
		case same && l.g != nil && l.g.Len() < len(names):
			if l.g, err = grow(l.g, names); errors.Is(err, errShrunk) {
				l.g, err = l.readGraph(r, names)
			}
		default:
			l.g, err = l.readGraph(r, names)
		}
		if err == nil && l.g.Feat == nil {
			l.g, err = l.withFeatures(r, l.g)
		}
		l.catalog, l.edgeWrites, l.catalogWrites = l.inCat, st.counters.EdgeWrites, st.counters.CatalogWrites
		if err == nil {
			st.lastStep, err = lastStep(r, st.counters)
		}
		if err == nil {
			st.retired, err = retiredNodes(r, names)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("load state from %s: %w", l.db.Path(), err)
	}
	st.g, st.tasks = l.g, l.tasks
	return st, nil
}

// retiredNodes marks, in storage order, the tasks storage has retired; nil when none is.
func retiredNodes(r *storage.Reader, names []storage.TaskKey) ([]bool, error) {
	ret, err := r.Retired()
	if err != nil || len(ret) == 0 {
		return nil, err
	}
	mask := make([]bool, len(names))
	for i, k := range names {
		mask[i] = ret[k]
	}
	return mask, nil
}

// readTasks reads every task's statistics into l.tasks, in storage order (environment, then
// task, byte order: the order of graph nodes), and returns their names.
func (l *loader) readTasks(r *storage.Reader) ([]storage.TaskKey, error) {
	l.tasks, l.names, l.inCat = l.tasks[:0], l.names[:0], 0
	err := r.Tasks(false, func(ti storage.TaskInfo) error {
		if ti.InCatalog {
			l.inCat++
		}
		l.names = append(l.names, storage.TaskKey{Env: ti.Env, Task: ti.Task.Task})
		l.tasks = append(l.tasks, ti.Stats)
		return nil
	})
	return l.names, err
}

// withFeatures attaches to g the catalogue features of its nodes (graph.TextFeatures of the
// stored rows, in storage order), which the predictor's feature prior reads.
func (l *loader) withFeatures(r *storage.Reader, g *graph.Graph) (*graph.Graph, error) {
	rows, err := storedRows(r, g.Len())
	if err != nil {
		return nil, err
	}
	if len(rows) != g.Len() {
		return nil, fmt.Errorf("%d stored tasks for a graph of %d nodes", len(rows), g.Len())
	}
	return g.WithFeatures(graph.TextFeatures(rows)), nil
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
	index := func(env, task string) (int, bool) {
		return slices.BinarySearchFunc(names, storage.TaskKey{Env: env, Task: task}, compareKey)
	}
	adj := make([][]graph.Edge, len(names))
	stored := false
	err := r.Edges(func(ne storage.NodeEdges) error {
		i, ok := index(ne.Node.Env, ne.Node.Task)
		if !ok {
			return nil
		}
		for _, e := range ne.Edges {
			if j, ok := index(e.Env, e.Task); ok && j != i {
				adj[i] = append(adj[i], graph.Edge{To: int32(j), Weight: e.Weight, Sim: e.Sim, Cross: e.Cross})
				stored = true
			}
		}
		return nil
	})
	if err != nil || stored || l.build == nil {
		return graph.New(envs, nodes, adj), err
	}
	return l.buildGraph(r, envs, nodes, names)
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
