//go:build analysis

package sim

import (
	"testing"
)

// TestAnalysisRandomReturnProbe prints, at steps 10, 20, 40 and 80, the learning signal of
// envsched's random slots, of the untried tasks its predictions chose and of its re-tries, as
// the stored state measures them (Dispersion.RandSignal, NewSignal, ReSignal), with
// RandomReturn, the same ratio against every pick of the batch, and ExplorationReturn. Its
// figures are in BENCHMARKS.md ("The default world's headline: how noisy the criterion is").
// A measurement, not a test:
//
//	H16_SCENARIO=default H16_SEEDS=2 go test -tags analysis -run AnalysisRandomReturnProbe -v ./sim/
func TestAnalysisRandomReturnProbe(t *testing.T) {
	sc := h16Scenario(t)
	cfg := Config{Scenario: sc, BatchSize: 64, GroupSize: 8, Steps: 80}
	for k := range envInt("H16_SEEDS", 3) {
		w, es, l := analysisRun(t, cfg, uint64(envInt("H16_SEED_BASE", 1000)+k))
		for step := 1; step <= cfg.Steps; step++ {
			v := &View{Step: step, Size: 64, Group: 8, World: w, Rand: stepRand(w.Seed, "envsched", step), truth: l.P}
			chosen, err := es.Choose(v)
			if err != nil {
				t.Fatal(err)
			}
			rolled, _ := rollOut(l, es, chosen, step, cfg)
			es.Observe(step, rolled)
			l.Update(step, rolled)
			if step == 10 || step == 20 || step == 40 || step == 80 {
				d := es.state.Dispersion
				if d.RandSignal == nil || d.NewSignal == nil || d.ReSignal == nil {
					continue
				}
				r, n, re := *d.RandSignal, *d.NewSignal, *d.ReSignal
				ch := (n.Sum - r.Sum) / (n.N - r.N)
				all := (n.Sum - r.Sum + re.Sum) / (n.N - r.N + re.N)
				t.Logf("%s seed %d step %d: random %.3f (%.0f), chosen untried %.3f (%.0f), re-tries %.3f (%.0f); RandomReturn %.3f, against all model picks %.3f, ExplorationReturn %.3f",
					sc.Name, w.Seed, step, r.Sum/r.N, r.N, ch, n.N-r.N, re.Sum/re.N, re.N, es.state.RandomReturn(), r.Sum/r.N/all, es.state.ExplorationReturn())
			}
		}
	}
}
