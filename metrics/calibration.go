package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/envsched/envsched/ledger"
)

// calibCollector exposes the calibration ledger (package ledger) at scrape time: per channel
// and over all channels, the groups measured and the predicted against realised degenerate
// share and mean reward; the same over the last ledger.RecentAnswers answers; the reliability
// table; and the estimate of rollouts saved against random choice. Environments are not a
// label: their number is the user's, and stats and the report show them.
type calibCollector struct {
	src Source

	groups, predDeg, realDeg, predMean, realMean *prometheus.Desc
	binGroups, binPred, binReal                  *prometheus.Desc
	open, expired, unmatched, saved, randomDeg   *prometheus.Desc
	restarted                                    *prometheus.Desc
}

func newCalibCollector(src Source) *calibCollector {
	cw := []string{"channel", "window"}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &calibCollector{src: src,
		groups:    d("envsched_calibration_groups", "Groups measured (a chosen task's group complete), by channel (never_tried, rechosen, random_slot, all) and window (all, or recent: the last 20 answers, channel all).", cw...),
		predDeg:   d("envsched_calibration_predicted_degenerate", "Mean predicted p_degenerate of the measured groups.", cw...),
		realDeg:   d("envsched_calibration_realised_degenerate", "Share of the measured groups whose rewards were all equal.", cw...),
		predMean:  d("envsched_calibration_predicted_mean", "Mean predicted reward of the measured groups (normalised into [0, 1]).", cw...),
		realMean:  d("envsched_calibration_realised_mean", "Mean realised reward of the measured groups (normalised into [0, 1]).", cw...),
		binGroups: d("envsched_calibration_reliability_groups", "Groups measured whose predicted p_degenerate fell in the bin.", "bin"),
		binPred:   d("envsched_calibration_reliability_predicted", "Mean predicted p_degenerate of the bin's groups.", "bin"),
		binReal:   d("envsched_calibration_reliability_realised", "Share of the bin's groups whose rewards were all equal.", "bin"),
		open:      d("envsched_calibration_open_predictions", "Predictions waiting for their group."),
		expired:   d("envsched_calibration_expired_total", "Predictions whose group never completed before later answers pushed them out."),
		unmatched: d("envsched_calibration_unmatched_rollouts_total", "Rollouts of a task with open predictions that answered none of them."),
		restarted: d("envsched_calibration_restarted_total", "Unfinished groups begun again by a rollout of the same batch under a new group key (a replayed step)."),
		saved:     d("envsched_rollouts_saved_estimate", "Estimated rollouts saved against random choice (see README: an estimate; source says from what).", "source"),
		randomDeg: d("envsched_random_degenerate_share_estimate", "Estimated degenerate share of random choice.", "source"),
	}
}

// Describe sends every metric's description.
func (c *calibCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.groups, c.predDeg, c.realDeg, c.predMean, c.realMean, c.binGroups,
		c.binPred, c.binReal, c.open, c.expired, c.unmatched, c.restarted, c.saved, c.randomDeg} {
		ch <- d
	}
}

// Collect reads the ledger; when it cannot be read the scrape says why.
func (c *calibCollector) Collect(ch chan<- prometheus.Metric) {
	l, err := c.src.Calibration(ledger.RecentAnswers)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.groups, err)
		return
	}
	envs, err := c.src.Envs()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.saved, err)
		return
	}
	d := ledger.Detailed(l, ledger.EnvMeans(envs))
	gauge := func(desc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
	}
	window := func(w ledger.Window, labels ...string) {
		gauge(c.groups, float64(w.Groups), labels...)
		gauge(c.predDeg, w.PredictedDegenerate, labels...)
		gauge(c.realDeg, w.RealisedDegenerate, labels...)
		gauge(c.predMean, w.PredictedMean, labels...)
		gauge(c.realMean, w.RealisedMean, labels...)
	}
	for name, w := range d.Channels {
		window(w, name, "all")
	}
	window(d.Overall, "all", "all")
	window(d.Recent, "all", "recent")
	for _, b := range d.Reliability {
		gauge(c.binGroups, float64(b.Groups), b.Range)
		gauge(c.binPred, b.PredictedDegenerate, b.Range)
		gauge(c.binReal, b.RealisedDegenerate, b.Range)
	}
	gauge(c.open, float64(d.Open))
	ch <- prometheus.MustNewConstMetric(c.expired, prometheus.CounterValue, float64(d.Expired))
	ch <- prometheus.MustNewConstMetric(c.unmatched, prometheus.CounterValue, float64(d.Unmatched))
	ch <- prometheus.MustNewConstMetric(c.restarted, prometheus.CounterValue, float64(d.Restarted))
	gauge(c.saved, d.Savings.RolloutsSaved, d.Savings.Source)
	gauge(c.randomDeg, d.Savings.RandomDegenerate, d.Savings.Source)
}
