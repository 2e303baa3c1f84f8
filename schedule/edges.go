package schedule

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
)

// EdgeKeeper keeps a graph.Builder in step with the stored catalogue, so that every commit that
// adds tasks stores, in the same transaction, the adjacency lists the new tasks change. Its
// OnTasks is the hook for ingest.Options.OnTasks. One EdgeKeeper serves one writer: it is not
// safe for concurrent use.
//
// The graph is built lazily, in the first commit that adds tasks: a process that finds nothing
// new never reads the catalogue nor builds anything.
type EdgeKeeper struct {
	opts graph.Options
	b    *graph.Builder // nil until the first OnTasks
}

// NewEdgeKeeper returns a keeper that builds its graph with opts. It reads nothing.
func NewEdgeKeeper(opts graph.Options) *EdgeKeeper {
	return &EdgeKeeper{opts: opts}
}

// Built reports whether the keeper has built its graph (whether OnTasks has been called).
func (k *EdgeKeeper) Built() bool { return k.b != nil }

// OnTasks adds tasks to the graph and returns the adjacency lists to store: the new tasks' and
// those of existing tasks whose nearest neighbours changed. r is the committing transaction,
// with added already stored.
//
// The first call builds the graph of the tasks stored before this commit, read through r, then
// adds added to it. When the database held tasks but no edges (one from before edges were kept
// at ingest), that call returns the list of every node, so that the stored graph is whole from
// then on.
func (k *EdgeKeeper) OnTasks(r *storage.Reader, added []record.Task) ([]storage.NodeEdges, error) {
	if k.b != nil {
		return k.lists(k.b.Add(added)), nil
	}
	before, hasEdges, err := readGraphInput(r, added)
	if err != nil {
		return nil, err
	}
	b := graph.NewBuilder(k.opts)
	old := b.Add(before) // every node stored before this commit
	changed := b.Add(added)
	k.b = b
	if len(before) > 0 && !hasEdges {
		return k.lists(unionKeys(old, changed)), nil
	}
	return k.lists(changed), nil
}

// unionKeys returns the keys of a and b, sorted by environment then task, without repeats.
func unionKeys(a, b []graph.NodeKey) []graph.NodeKey {
	out := slices.Concat(a, b)
	cmpKeys := func(x, y graph.NodeKey) int {
		if c := cmp.Compare(x.Env, y.Env); c != 0 {
			return c
		}
		return cmp.Compare(x.Task, y.Task)
	}
	slices.SortFunc(out, cmpKeys)
	return slices.CompactFunc(out, func(x, y graph.NodeKey) bool { return x == y })
}

// readGraphInput returns the stored tasks that are not in added, and whether any edges are
// stored.
func readGraphInput(r *storage.Reader, added []record.Task) ([]record.Task, bool, error) {
	isNew := make(map[storage.TaskKey]bool, len(added))
	for _, t := range added {
		isNew[storage.TaskKey{Env: t.Env, Task: t.Task}] = true
	}
	var before []record.Task
	err := r.Tasks(true, func(ti storage.TaskInfo) error {
		if !isNew[storage.TaskKey{Env: ti.Env, Task: ti.Task.Task}] {
			before = append(before, ti.Task)
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("read catalogue for the graph: %w", err)
	}
	hasEdges := false
	err = r.Edges(func(storage.NodeEdges) error { hasEdges = true; return errStopEdges })
	if err != nil && !errors.Is(err, errStopEdges) {
		return nil, false, fmt.Errorf("read stored edges: %w", err)
	}
	return before, hasEdges, nil
}

// errStopEdges ends the scan for stored edges at the first one.
var errStopEdges = errors.New("stop")

func (k *EdgeKeeper) lists(keys []graph.NodeKey) []storage.NodeEdges {
	out := make([]storage.NodeEdges, len(keys))
	for i, key := range keys {
		named := k.b.Adjacency(key)
		edges := make([]storage.Edge, len(named))
		for j, e := range named {
			edges[j] = storage.Edge{Env: e.Env, Task: e.Task, Weight: e.Weight, Sim: e.Sim, Cross: e.Cross}
		}
		out[i] = storage.NodeEdges{Node: storage.TaskKey{Env: key.Env, Task: key.Task}, Edges: edges}
	}
	return out
}
