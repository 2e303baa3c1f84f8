//go:build analysis

package sim

import (
	"math"
	"testing"
)

// TestAnalysisRechosenByLastGroup sums envsched's re-tries of steps 11-40 (random slots left
// out) by the successes of the task's last group before the pick: their share, how often
// they came back all-equal, the predicted chance (the prediction selection read, before the
// pick correction) and the true chance. Its figures are in BENCHMARKS.md ("The default world's
// headline: how noisy the criterion is"). A measurement, not a test:
//
//	H16_SCENARIO=default H16_SEEDS=6 go test -tags analysis -run AnalysisRechosenByLastGroup -v ./sim/
func TestAnalysisRechosenByLastGroup(t *testing.T) {
	sc := h16Scenario(t)
	cfg := Config{Scenario: sc, BatchSize: 64, GroupSize: 8, Steps: 40}
	type cell struct{ n, deg, pred, truth, groups float64 }
	type res struct{ c [9]cell }
	runs := seedRuns(envInt("H16_SEEDS", 6), func(k int) res {
		var r res
		w, es, l := analysisRun(t, cfg, uint64(envInt("H16_SEED_BASE", 1000)+k))
		last := map[int]int{}
		ngroups := map[int]int{}
		for step := 1; step <= cfg.Steps; step++ {
			v := &View{Step: step, Size: 64, Group: 8, World: w, Rand: stepRand(w.Seed, "envsched", step), truth: l.P}
			preds, _, err := es.pred.Predict(es.g, es.tasks, int64(step), es.state)
			if err != nil {
				t.Error(err)
				return r
			}
			_ = preds
			pdeg := map[int]float64{}
			for i := range preds {
				pdeg[es.task[i]] = preds[i].PDegenerate(8)
			}
			truth := map[int]float64{}
			chosen, err := es.Choose(v)
			if err != nil {
				t.Error(err)
				return r
			}
			for _, ti := range chosen {
				p := l.P(ti)
				truth[ti] = math.Pow(p, 8) + math.Pow(1-p, 8)
			}
			rolled, _ := rollOut(l, es, chosen, step, cfg)
			for _, g := range rolled {
				k, ok := last[g.Task]
				if ok && step > 10 && !es.state.Baseline[es.node[g.Task]].Random {
					c := &r.c[k]
					c.n++
					if g.Degenerate() {
						c.deg++
					}
					c.pred += pdeg[g.Task]
					c.truth += truth[g.Task]
					c.groups += float64(ngroups[g.Task])
				}
				last[g.Task] = g.Successes
				ngroups[g.Task]++
			}
			es.Observe(step, rolled)
			l.Update(step, rolled)
		}
		return r
	})
	var tot [9]cell
	for _, r := range runs {
		for k := range 9 {
			tot[k].n += r.c[k].n
			tot[k].deg += r.c[k].deg
			tot[k].pred += r.c[k].pred
			tot[k].truth += r.c[k].truth
			tot[k].groups += r.c[k].groups
		}
	}
	all := 0.0
	for k := range 9 {
		all += tot[k].n
	}
	for k := range 9 {
		c := tot[k]
		if c.n == 0 {
			continue
		}
		t.Logf("%s last group %d/8: %5.1f%% of re-tries, realised deg %.3f, predicted (before the pick correction) %.3f, true %.3f, groups before %.1f",
			sc.Name, k, 100*c.n/all, c.deg/c.n, c.pred/c.n, c.truth/c.n, c.groups/c.n)
	}
}
