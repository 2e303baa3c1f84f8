package propagate

import "github.com/envsched/envsched/stats"

// retry is the outcome of one chosen task that had been rolled out before: how many groups of
// two or more rollouts came back since its baseline, how many of them were not all-equal,
// and whether it was chosen mainly for coverage.
type retry struct {
	groups, informative int64
	cover               bool
}

// retryOf returns the groups that came back for the task of b (statistics t) when b is a
// task tried before that selection chose (not a random slot) and some group of it came back.
// A baseline whose counts run ahead of the statistics (a database from before the counts
// were stored, or another catalogue) measures nothing.
func retryOf(b Baseline, t *stats.Task) (retry, bool) {
	if !b.Tried || b.Random || t.Groups <= b.Groups || b.Groups < 0 || b.Degenerate < 0 {
		return retry{}, false
	}
	g, deg := t.Groups-b.Groups, t.Degenerate-b.Degenerate
	if deg < 0 || deg > g {
		return retry{}, false
	}
	return retry{groups: g, informative: g - deg, cover: b.Cover}, true
}

// measureRetries forgets a share 1 − DispersionMemory of what re-tries returned before and
// adds retries, each in its channel: chosen mainly for coverage (CoverSignal) or for its
// exploitation value (ExploitSignal). Nothing is forgotten by a call that measures none.
func (d *drift) measureRetries(retries []retry) {
	if len(retries) == 0 {
		return
	}
	for _, sg := range []*Signal{d.disp.CoverSignal, d.disp.ExploitSignal} {
		if sg != nil {
			sg.Sum, sg.N = sg.Sum*d.memory, sg.N*d.memory
		}
	}
	for _, r := range retries {
		sg := &d.disp.ExploitSignal
		if r.cover {
			sg = &d.disp.CoverSignal
		}
		if *sg == nil {
			*sg = &Signal{}
		}
		(*sg).Sum += float64(r.informative)
		(*sg).N += float64(r.groups)
	}
}

// coverPrior is the weight, in groups, with which CoverReturn shrinks the measured return of
// coverage-driven re-tries towards that of the others: minSignalGroups, the number of groups
// ExplorationReturn waits for, so that a handful of groups moves the factor a little and a
// batch's worth of them most of the way.
const coverPrior = minSignalGroups

// CoverReturn is what re-tries chosen mainly for coverage (tasks rolled out before whose
// coverage value outweighed their exploitation value) have measurably returned: the share of
// their groups that were informative (not all-equal), shrunk towards the share of re-tries
// chosen for their exploitation value with the weight of coverPrior groups, over that share;
// at most 1, and 1 until the exploitation re-tries have minSignalGroups (decayed) groups. A
// caller multiplies the uncertainty and staleness of tasks tried before by it
// (batcher.Params.RetryCoverage): where re-trying a task for coverage finds all-equal groups
// more often than re-trying it for its predicted spread, coverage buys fewer re-tries, in
// proportion. As coverage re-tries become rarer their measurement is forgotten and the factor
// drifts back towards 1, so a world that changes is looked at again.
func (s State) CoverReturn() float64 {
	ex, cv := s.Dispersion.ExploitSignal, s.Dispersion.CoverSignal
	if ex == nil || ex.N < minSignalGroups || ex.Sum <= 0 {
		return 1
	}
	m := ex.mean()
	sum, n := coverPrior*m, float64(coverPrior)
	if cv != nil {
		sum, n = sum+cv.Sum, n+cv.N
	}
	return min(sum/n/m, 1)
}
