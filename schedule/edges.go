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
// adds tasks or changes their descriptions stores, in the same transaction, the adjacency lists
// that change. Its OnTasks is the hook for ingest.Options.OnTasks, and its Reset the hook for
// ingest.Options.OnCommitError. One EdgeKeeper serves one writer: it is not safe for concurrent
// use.
//
// The graph is built lazily, in the first commit that adds or describes tasks: a process that
// finds nothing new never reads the catalogue nor builds anything.
type EdgeKeeper struct {
	opts graph.Options
	b    *graph.Builder // nil until the first OnTasks, and again after Reset
}

// NewEdgeKeeper returns a keeper that builds its graph with opts. It reads nothing.
func NewEdgeKeeper(opts graph.Options) *EdgeKeeper {
	return &EdgeKeeper{opts: opts}
}

// Built reports whether the keeper holds a graph (whether OnTasks has been called since it was
// made or Reset).
func (k *EdgeKeeper) Built() bool { return k.b != nil }

// Reset drops the graph. Call it when a commit in which OnTasks ran fails: the graph then holds
// tasks the database does not, and a retry would find them known and store no lists for them.
// The next commit that adds or describes tasks builds the graph again from what is committed.
func (k *EdgeKeeper) Reset() { k.b = nil }

// OnTasks adds to the graph the tasks a commit adds and the new descriptions of known tasks
// (changed), and returns the adjacency lists to store: those of the added and changed tasks,
// and of every other task whose nearest neighbours changed. r is the committing transaction,
// with added and changed already stored. Its signature is that of storage.Batch.Adjacency.
//
// The first call builds the graph of the tasks stored before this commit, read through r, then
// adds added and changed to it. When the database held tasks but no edges (one from before
// edges were kept at ingest), that call returns the list of every node, so that the stored
// graph is whole from then on.
func (k *EdgeKeeper) OnTasks(r *storage.Reader, added, changed []record.Task) ([]storage.NodeEdges, error) {
	now := slices.Concat(added, changed)
	if k.b != nil {
		return k.lists(k.b.Add(now)), nil
	}
	before, hasEdges, err := readGraphInput(r, now)
	if err != nil {
		return nil, err
	}
	b := graph.NewBuilder(k.opts)
	old := b.Add(before) // every node stored before this commit but those of now
	diff := b.Add(now)
	k.b = b
	switch {
	case len(before) > 0 && !hasEdges:
		return k.lists(unionKeys(old, diff)), nil
	case len(changed) > 0 && hasEdges:
		// The graph never held the old descriptions of changed: the nodes that the stored
		// edges link to them may have lost that link, which diff does not show.
		linked, err := linkedTo(r, changed)
		if err != nil {
			return nil, err
		}
		return k.lists(unionKeys(diff, linked)), nil
	}
	return k.lists(diff), nil
}

// linkedTo returns the nodes whose stored lists name one of tasks, and those that the stored
// lists of tasks name.
func linkedTo(r *storage.Reader, tasks []record.Task) ([]graph.NodeKey, error) {
	of := make(map[storage.TaskKey]bool, len(tasks))
	for _, t := range tasks {
		of[storage.TaskKey{Env: t.Env, Task: t.Task}] = true
	}
	var out []graph.NodeKey
	err := r.Edges(func(ne storage.NodeEdges) error {
		for _, e := range ne.Edges {
			if of[ne.Node] {
				out = append(out, graph.NodeKey{Env: e.Env, Task: e.Task})
			} else if of[storage.TaskKey{Env: e.Env, Task: e.Task}] {
				out = append(out, graph.NodeKey{Env: ne.Node.Env, Task: ne.Node.Task})
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read stored edges: %w", err)
	}
	return out, nil
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

// readGraphInput returns the stored tasks that are not in now (the tasks the commit adds or
// describes anew), and whether any edges are stored. A changed task is left out too: r shows
// its new description, and the caller adds that after the rest, so that the lists it changes
// are reported.
func readGraphInput(r *storage.Reader, now []record.Task) ([]record.Task, bool, error) {
	skip := make(map[storage.TaskKey]bool, len(now))
	for _, t := range now {
		skip[storage.TaskKey{Env: t.Env, Task: t.Task}] = true
	}
	var before []record.Task
	err := r.Tasks(true, func(ti storage.TaskInfo) error {
		if !skip[storage.TaskKey{Env: ti.Env, Task: ti.Task.Task}] {
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
