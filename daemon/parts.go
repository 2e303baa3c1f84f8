package daemon

import (
	"log/slog"

	"github.com/envsched/envsched/ingest"
	"github.com/envsched/envsched/schedule"
	"github.com/envsched/envsched/storage"
)

// defaultParts are the real ingester (schedule.NewIngester: package ingest keeping the graph
// edges) and the real scheduler (schedule.Configured), configured from cfg.
func defaultParts(cfg Config) parts {
	return parts{ingester: newIngester, answerer: func(db *storage.DB) (Answerer, error) {
		return newScheduler(db, cfg)
	}}
}

// newIngester is envsched's ingester over the exchange directory (schedule.NewIngester: the
// graph edges kept at ingest), with the daemon's hooks: the crash point before each commit and
// the progress of a scan.
func newIngester(db *storage.DB, dir string, logger *slog.Logger, hooks IngestHooks) (Ingester, error) {
	return schedule.NewIngester(db, dir, ingest.Options{Logger: logger, BeforeCommit: hooks.BeforeCommit,
		Progress: hooks.Progress})
}

// newScheduler is the scheduler with the configured parameters and request defaults.
func newScheduler(db *storage.DB, cfg Config) (*schedule.Scheduler, error) {
	p := schedule.DefaultParams()
	if cfg.Schedule != nil {
		p = *cfg.Schedule
	}
	return schedule.Configured(db, p, cfg.BatchSize, cfg.GroupSize, nil)
}
