package schedule

import (
	"github.com/envsched/envsched/catalog"
	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/ingest"
	"github.com/envsched/envsched/storage"
)

// NewIngester returns package ingest's Ingester over the exchange directory dir as envsched
// runs it (the daemon, `envsched ingest` and `envsched batch` alike): parquet catalogues read by
// package catalog, and the graph edges kept at ingest. The edges are built inside storage's
// write transaction, through a callback, so that they commit with their tasks:
//
//	ingest.Options.OnTasks  ->  storage.Batch.Adjacency  ->  EdgeKeeper.OnTasks  ->  graph.Builder
//
// each commit that adds tasks or changes their descriptions calls it with the committing
// transaction and stores the adjacency lists it returns; a failed commit resets the keeper
// (OnCommitError), which then rebuilds its graph from what is committed. opts gives the rest
// (Logger, Progress, BeforeCommit, the commit bounds); its ReadCatalogFile, OnTasks and
// OnCommitError are set here.
func NewIngester(db *storage.DB, dir string, opts ingest.Options) (*ingest.Ingester, error) {
	edges := NewEdgeKeeper(graph.Options{})
	opts.ReadCatalogFile = catalog.ReadFile
	opts.OnTasks, opts.OnCommitError = edges.OnTasks, edges.Reset
	return ingest.New(db, dir, opts)
}
