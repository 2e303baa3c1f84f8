package schedule

import (
	"github.com/envsched/envsched/catalog"
	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/ingest"
	"github.com/envsched/envsched/storage"
)

// NewIngester returns package ingest's Ingester over the exchange directory dir as envsched
// runs it (the daemon, `envsched ingest` and `envsched batch` alike): parquet catalogues read by
// package catalog, and the graph edges kept at ingest by an EdgeKeeper. Each commit that adds
// tasks or changes their descriptions stages them in the keeper, inside storage's write
// transaction, and marks the stored edges pending; once the scan's records are committed, the
// keeper builds once and the ingester stores the lists that changed in commits of bounded size,
// the last of which clears the mark:
//
//	ingest.Options.OnTasks  ->  storage.Batch.Adjacency  ->  EdgeKeeper.Stage   ->  graph.Builder.Stage
//	ingest.Options.FinishEdges  ->  EdgeKeeper.Finish  ->  graph.Builder.Flush  ->  storage.Batch.Edges
//
// So the edges are a function of what a scan read, not of how it was split into commits. A
// failed commit resets the keeper (OnCommitError), which then rebuilds its graph from what is
// committed; a process stopped before the mark is cleared leaves it set, and the next scan
// stores the lists of a build of the whole stored catalogue. opts gives the rest (Logger,
// Progress, BeforeCommit, the commit bounds); its ReadCatalogFile, OnTasks, FinishEdges and
// OnCommitError are set here.
func NewIngester(db *storage.DB, dir string, opts ingest.Options) (*ingest.Ingester, error) {
	return newIngester(db, dir, opts, false)
}

// NewOneShotIngester is NewIngester for a process that scans once and exits (`envsched ingest`,
// `envsched batch`): once the graph is built, its builder drops the index that scoring new
// tasks needs (at a million tasks, hundreds of megabytes) before the edge lists are stored,
// which lowers the process's peak memory. Another Scan of the same ingester works but builds
// the graph again from the database; the daemon, which scans again and again, uses NewIngester.
func NewOneShotIngester(db *storage.DB, dir string, opts ingest.Options) (*ingest.Ingester, error) {
	return newIngester(db, dir, opts, true)
}

func newIngester(db *storage.DB, dir string, opts ingest.Options, once bool) (*ingest.Ingester, error) {
	edges := NewEdgeKeeper(graph.Options{})
	edges.once, edges.log = once, opts.Logger
	opts.ReadCatalogFile = catalog.ReadFile
	opts.OnTasks, opts.FinishEdges, opts.OnCommitError = edges.Stage, edges.Finish, edges.Reset
	return ingest.New(db, dir, opts)
}
