package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/envsched/envsched/schedule"
)

// corrCollector exposes the corrections stored with the last answer (schedule.Corrections),
// named as in status.json's corrections: the dispersion correction per channel, the measured
// factors of selection with their groups, and the re-chosen channel's factor, offset and
// trend weight. Environments are not a label (their number is the user's): status.json,
// stats and the report show each one's.
type corrCollector struct {
	src Source

	scale, slope, eta, theta, groups                                  *prometheus.Desc
	ret, retGroups                                                    *prometheus.Desc
	reFactor, newFactor, lowFactor, randFactor, reOffset, trendWeight *prometheus.Desc
	newOffset                                                         *prometheus.Desc
	graded, gradedGroups                                              *prometheus.Desc
	state                                                             *prometheus.Desc
}

func newCorrCollector(src Source) *corrCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &corrCollector{src: src,
		scale:        d("envsched_correction_scale", "Dispersion correction: the factor of the posterior's count (below 1: predictions were over-confident), by channel (never_tried: an environment with no groups of its own; rechosen; random_slot).", "channel"),
		slope:        d("envsched_correction_slope", "Dispersion correction: the factor of a predicted mean's departure from its environment's centre, in logits.", "channel"),
		eta:          d("envsched_correction_eta", "Dispersion correction: the count times (4m(1-m))^-eta for a predicted mean m.", "channel"),
		theta:        d("envsched_correction_theta", "Dispersion correction: a count n becomes 2(n/2)^theta.", "channel"),
		groups:       d("envsched_correction_groups", "Groups (decayed) the channel's dispersion correction was fitted on.", "channel"),
		ret:          d("envsched_correction_return", "Measured factor of selection: exploration_return (of the coverage weight), random_return (of the random share), coverage_return (of re-tries' coverage); 1 until measured.", "name"),
		retGroups:    d("envsched_correction_return_groups", "Groups (decayed) behind a measured factor: side measured (the kind it weighs) or reference (what it is compared with).", "name", "side"),
		reFactor:     d("envsched_correction_rechosen_factor", "Factor of the re-chosen correction's count for selection's re-chosen picks (1 until measured)."),
		newFactor:    d("envsched_correction_never_tried_factor", "Factor of the count of selection's picks of tasks never tried, in environments whose rewards are 0 or 1 (1 until measured)."),
		lowFactor:    d("envsched_correction_rechosen_low_factor", "Factor of the re-chosen correction's count for selection's re-chosen picks predicted to teach little (4E[p(1-p)] below 1/2); rechosen_factor until measured."),
		newOffset:    d("envsched_correction_never_tried_offset", "Logit offset of the mean of selection's picks of tasks never tried, in environments whose rewards are 0 or 1, before the never-tried factor (0 until measured)."),
		randFactor:   d("envsched_correction_random_factor", "Factor of the count of a random slot's answer, in environments whose rewards are 0 or 1, matched on the last random slots' groups (1 until measured)."),
		reOffset:     d("envsched_correction_rechosen_offset", "The one re-chosen logit offset of tasks rolled out before."),
		trendWeight:  d("envsched_correction_rechosen_trend_weight", "Weight of the re-chosen trend against the one offset, N/(N + 8) for N groups (0: none fitted)."),
		graded:       d("envsched_correction_graded_map", "Graded calibration: the map moving the logit of p_degenerate of a pick of an environment with graded rewards, intercept + slope·logit, by channel; absent while none is fitted.", "channel", "coef"),
		gradedGroups: d("envsched_correction_graded_map_groups", "Groups (decayed) the channel's graded calibration map was fitted on.", "channel"),
		state:        d("envsched_correction_state", "1 for where the corrections come from, 0 for the others: stored (the state stored with the last answer), none (no answer stored one yet), unreadable (the stored state does not decode; the gauges show where the next answer starts).", "state"),
	}
}

// Describe sends every metric's description.
func (c *corrCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.scale, c.slope, c.eta, c.theta, c.groups, c.ret, c.retGroups,
		c.reFactor, c.newFactor, c.newOffset, c.lowFactor, c.randFactor, c.reOffset, c.trendWeight, c.graded, c.gradedGroups, c.state} {
		ch <- d
	}
}

// Collect reads the stored predictor state; when it cannot be read the scrape says why.
func (c *corrCollector) Collect(ch chan<- prometheus.Metric) {
	state, err := c.src.PredictorState()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.scale, err)
		return
	}
	cr := schedule.Corrections(state)
	gauge := func(desc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
	}
	for name, k := range cr.Dispersion {
		gauge(c.scale, k.Scale, name)
		gauge(c.slope, k.Slope, name)
		gauge(c.eta, k.Eta, name)
		gauge(c.theta, k.Theta, name)
		gauge(c.groups, k.Groups, name)
	}
	for name, r := range cr.Returns() {
		gauge(c.ret, r.Factor, name)
		gauge(c.retGroups, r.Groups, name, "measured")
		gauge(c.retGroups, r.ReferenceGroups, name, "reference")
	}
	gauge(c.reFactor, cr.RechosenFactor)
	gauge(c.newFactor, cr.NeverTriedFactor)
	gauge(c.newOffset, cr.NeverTriedOffset)
	gauge(c.lowFactor, cr.RechosenLowFactor)
	gauge(c.randFactor, cr.RandomFactor)
	gauge(c.reOffset, cr.RechosenOffset)
	weight := 0.0
	if cr.RechosenTrend != nil {
		weight = cr.RechosenTrend.Weight
	}
	gauge(c.trendWeight, weight)
	for name, m := range cr.GradedMaps {
		gauge(c.graded, m.Coef[0], name, "intercept")
		gauge(c.graded, m.Coef[1], name, "slope")
		gauge(c.gradedGroups, m.Groups, name)
	}
	for _, st := range []string{schedule.CorrectionsStored, schedule.CorrectionsNone, schedule.CorrectionsUnreadable} {
		v := 0.0
		if cr.State == st {
			v = 1
		}
		gauge(c.state, v, st)
	}
}
