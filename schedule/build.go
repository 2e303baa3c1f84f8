package schedule

import (
	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/record"
)

// DefaultBuildGraph builds the dual-relation graph of a whole catalogue with the graph
// package's default options, in one Add, so that the graph depends only on the set of tasks.
func DefaultBuildGraph(tasks []record.Task) *graph.Graph {
	b := graph.NewBuilder(graph.Options{})
	b.Add(tasks)
	return b.Snapshot()
}
