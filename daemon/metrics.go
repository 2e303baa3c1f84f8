package daemon

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/envsched/envsched/metrics"
)

// startMetrics opens Config.MetricsAddr and serves the Prometheus metrics (package metrics)
// from a goroutine of wg until ctx is done; without an address it does nothing. A scrape only
// reads the database, beside the writer.
func (d *Daemon) startMetrics(ctx context.Context, wg *sync.WaitGroup) error {
	if d.cfg.MetricsAddr == "" {
		return nil
	}
	ln, err := metrics.Listen(d.cfg.MetricsAddr)
	if err != nil {
		return fmt.Errorf("--metrics-addr: %w", err)
	}
	d.metrics = metrics.New(d.db, d.dirs.root, d.log)
	wg.Go(func() {
		if err := d.metrics.Serve(ctx, ln); err != nil {
			d.log.Warn("metrics server stopped", "err", err)
		}
	})
	return nil
}

// observeRequest records the latency of one published answer in the metrics, when served.
func (d *Daemon) observeRequest(latency time.Duration) {
	if d.metrics != nil {
		d.metrics.ObserveRequest(latency)
	}
}
