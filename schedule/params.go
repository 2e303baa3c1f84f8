package schedule

import (
	"log/slog"

	"github.com/envsched/envsched/batcher"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/stats"
	"github.com/envsched/envsched/storage"
)

// Params are the scheduler's tunable parameters, those of prediction (package propagate) and
// of selection (package batcher), as the command line and the daemon carry them. Predict.Decay
// is not one of them: the statistics were decayed with the database's own, so Configured always
// puts that one in.
type Params struct {
	Predict propagate.Params
	Select  batcher.Params
}

// DefaultParams are propagate's and batcher's defaults (with the default decay, which
// Configured replaces by the database's).
func DefaultParams() Params {
	return Params{Predict: propagate.DefaultParams(), Select: batcher.DefaultParams()}
}

// Validate reports the first parameter out of its range, as propagate and batcher word it. The
// decay is checked as the default decay, since the database's replaces it.
func (p Params) Validate() error {
	pp := p.Predict
	pp.Decay = stats.DefaultDecay
	if err := pp.Validate(); err != nil {
		return err
	}
	return p.Select.Validate()
}

// Configured returns the Scheduler that `envsched run`, `envsched batch` and the daemon
// answer with: parameters p with the database's decay, size and groupSize as the defaults of a
// request that gives none (0 takes DefaultSize and DefaultGroupSize), the graph built from the
// catalogue (DefaultBuildGraph) when the database stores no edges, and a line per answer to
// logger (nil discards).
func Configured(db *storage.DB, p Params, size, groupSize int, logger *slog.Logger) (*Scheduler, error) {
	pp, sel := p.Predict, p.Select
	pp.Decay = db.Config().Decay
	return New(db, Options{Size: size, GroupSize: groupSize, Predict: &pp, Select: &sel,
		BuildGraph: DefaultBuildGraph, Logger: logger})
}
