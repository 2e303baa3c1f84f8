package schedule

import (
	"errors"
	"fmt"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
)

// EdgeKeeper keeps a graph.Builder in step with the stored catalogue, so that every commit that
// adds tasks stores, in the same transaction, the adjacency lists the new tasks change. Its
// OnTasks is the hook for ingest.Options.OnTasks. One EdgeKeeper serves one writer: it is not
// safe for concurrent use.
type EdgeKeeper struct {
	b *graph.Builder
}

// NewEdgeKeeper builds the graph of the tasks db holds. When db holds tasks but no edges (a
// database from before edges were kept at ingest), it stores every adjacency list once, in one
// commit, so that the stored graph is whole from then on.
func NewEdgeKeeper(db *storage.DB, opts graph.Options) (*EdgeKeeper, error) {
	k := &EdgeKeeper{b: graph.NewBuilder(opts)}
	var rows []record.Task
	hasEdges := false
	err := db.View(func(r *storage.Reader) error {
		if err := r.Tasks(true, func(ti storage.TaskInfo) error {
			rows = append(rows, ti.Task)
			return nil
		}); err != nil {
			return err
		}
		return r.Edges(func(storage.NodeEdges) error { hasEdges = true; return errStopEdges })
	})
	if err != nil && !errors.Is(err, errStopEdges) {
		return nil, fmt.Errorf("read catalogue for the graph: %w", err)
	}
	changed := k.b.Add(rows)
	if hasEdges || len(changed) == 0 {
		return k, nil
	}
	if _, err := db.Commit(&storage.Batch{Edges: k.lists(changed)}); err != nil {
		return nil, fmt.Errorf("store the graph's edges: %w", err)
	}
	return k, nil
}

// errStopEdges ends the scan for stored edges at the first one.
var errStopEdges = errors.New("stop")

// OnTasks adds tasks to the graph and returns the adjacency lists to store: the new tasks' and
// those of existing tasks whose nearest neighbours changed.
func (k *EdgeKeeper) OnTasks(added []record.Task) ([]storage.NodeEdges, error) {
	return k.lists(k.b.Add(added)), nil
}

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
