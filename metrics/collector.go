package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/envsched/envsched/summary"
)

// collector reads the database's counts at scrape time.
type collector struct {
	src Source
	dir string

	rollouts, quarantined, duplicates, clipped, answered *prometheus.Desc
	tasks, envs, dbBytes, lagBytes, lagFiles             *prometheus.Desc
}

func newCollector(src Source, dir string) *collector {
	d := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, nil, nil) }
	return &collector{src: src, dir: dir,
		rollouts:    d("envsched_rollouts_ingested_total", "Rollouts stored (not quarantined, not duplicates), over the whole database."),
		quarantined: d("envsched_quarantined_total", "Lines quarantined (set aside as unreadable), over the whole database."),
		duplicates:  d("envsched_duplicates_total", "Rollouts skipped because their rollout_id was seen before."),
		clipped:     d("envsched_clipped_total", "Stored rollouts whose reward was clipped into the configured range."),
		answered:    d("envsched_requests_answered_total", "Batch requests answered (answers stored), over the whole database."),
		tasks:       d("envsched_tasks", "Tasks known (catalogue or rollouts)."),
		envs:        d("envsched_envs", "Environments known."),
		dbBytes:     d("envsched_db_size_bytes", "Size of the database file."),
		lagBytes:    d("envsched_ingest_lag_bytes", "Bytes of rollout and catalogue files not yet read into the database."),
		lagFiles:    d("envsched_ingest_lag_files", "Rollout and catalogue files with bytes not yet read."),
	}
}

// Describe sends every metric's description.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.rollouts, c.quarantined, c.duplicates, c.clipped, c.answered,
		c.tasks, c.envs, c.dbBytes, c.lagBytes, c.lagFiles} {
		ch <- d
	}
}

// Collect reads the database and the exchange directory. A part that cannot be read is
// reported as an invalid metric (the scrape says why); the others are still sent.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v))
	}
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	if ctr, err := c.src.Counters(); err != nil {
		ch <- prometheus.NewInvalidMetric(c.rollouts, err)
	} else {
		counter(c.rollouts, ctr.Rollouts)
		counter(c.quarantined, ctr.Quarantined)
		counter(c.duplicates, ctr.Duplicates)
		counter(c.clipped, ctr.Clipped)
		counter(c.answered, ctr.RequestsAnswered)
	}
	if envs, err := c.src.Envs(); err != nil {
		ch <- prometheus.NewInvalidMetric(c.tasks, err)
	} else {
		gauge(c.tasks, float64(summary.Total(envs).Tasks))
		gauge(c.envs, float64(len(envs)))
	}
	gauge(c.dbBytes, dbSize(c.src.Path()))
	if lag, err := measureLag(c.src, c.dir); err != nil {
		ch <- prometheus.NewInvalidMetric(c.lagBytes, err)
	} else {
		gauge(c.lagBytes, float64(lag.bytes))
		gauge(c.lagFiles, float64(lag.files))
	}
}
