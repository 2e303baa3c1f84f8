package daemon

import (
	"io"
	"log/slog"

	"github.com/envsched/envsched/catalog"
	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/ingest"
	"github.com/envsched/envsched/schedule"
	"github.com/envsched/envsched/storage"
)

// defaultParts are the real ingester (package ingest, with parquet catalogues read by package
// catalog) and the real scheduler (package schedule), configured from cfg.
func defaultParts(cfg Config) parts {
	return parts{ingester: newIngester, answerer: func(db *storage.DB) (Answerer, error) {
		return newScheduler(db, cfg)
	}}
}

// newIngester is package ingest's Ingester over the exchange directory.
// Each commit that adds tasks or changes their descriptions also stores the graph edges they
// change (schedule.EdgeKeeper), and a failed commit resets the keeper.
func newIngester(db *storage.DB, dir string, logger *slog.Logger, hooks IngestHooks) (Ingester, error) {
	edges := schedule.NewEdgeKeeper(graph.Options{})
	return ingest.New(db, dir, ingest.Options{Logger: logger, ReadCatalogFile: catalog.ReadFile,
		BeforeCommit: hooks.BeforeCommit, Progress: hooks.Progress, OnTasks: edges.OnTasks, OnCommitError: edges.Reset})
}

// newScheduler is package schedule's Scheduler with the configured defaults and parameters. The
// decay is always the database's own.
func newScheduler(db *storage.DB, cfg Config) (*schedule.Scheduler, error) {
	opts := schedule.Options{Size: cfg.BatchSize, GroupSize: cfg.GroupSize, Select: cfg.Select,
		BuildGraph: schedule.DefaultBuildGraph, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if cfg.Predict != nil {
		pp := *cfg.Predict
		pp.Decay = db.Config().Decay
		opts.Predict = &pp
	}
	return schedule.New(db, opts)
}
