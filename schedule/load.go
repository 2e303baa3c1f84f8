package schedule

import (
	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
	"github.com/envsched/envsched/storage"
)

// Load reads in r what the scheduler predicts from, the way its loader reads it for a request:
// the graph of every stored task (nodes in storage order: by environment, then task), from the
// stored edges or, when none are stored, built by build from the catalogue (nil: no edges),
// with the catalogue features attached; and every task's statistics, indexed like the graph's
// nodes. Readers that predict as a request would (the report) load through it, within their
// own read transaction.
func Load(r *storage.Reader, build BuildGraph) (*graph.Graph, []stats.Task, error) {
	l := loader{build: build}
	names, err := l.readTasks(r)
	if err != nil {
		return nil, nil, err
	}
	g, err := l.readGraph(r, names)
	if err == nil && g.Feat == nil {
		g, err = l.withFeatures(r, g)
	}
	if err != nil {
		return nil, nil, err
	}
	return g, l.tasks, nil
}
