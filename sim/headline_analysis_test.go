//go:build analysis

// TestAnalysisSkillSpread asks why envsched's held-out score at step 40 is no better than
// random's in some worlds although it wastes fewer groups: it runs envsched and random on the
// same seeds and reports, at step 40, the learning signal each put on the skills, how evenly
// (the effective number of skills trained), how much of it went to skills that the held-out
// score weighs, and the level gain that resulted. A measurement, not a test:
//
//	HL_SCENARIO=default HL_SEEDS=3 go test -tags analysis -run AnalysisSkillSpread -v ./sim/
//
// HL_SEED_BASE (1000), HL_SEEDS (6); HL_PEN, HL_COV, HL_TRANSFER and HL_OVERLAP override envsched's
// similarity penalty, coverage weight, transfer factor and word overlap; HL_ONLY=NAME runs that policy alone.
package sim

import (
	"os"
	"strconv"
	"testing"
)

type spreadStat struct {
	signal, eff, valued, gain, heldGain, envSpread, eval, evalTasks float64
}

func skillSpread(t *testing.T, w *World, policy string, cfg Config, at int) spreadStat {
	p, err := NewPolicy(policy, w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLearner(w)
	cum := make([]float64, len(w.Init))
	envPicks := make([]float64, len(w.Envs))
	for step := 1; step <= at; step++ {
		v := &View{Step: step, Size: cfg.BatchSize, Group: cfg.GroupSize, World: w, Rand: stepRand(w.Seed, policy, step), truth: l.P}
		chosen, err := p.Choose(v)
		if err != nil {
			t.Fatal(err)
		}
		rolled, trained := rollOut(l, p, chosen, step, cfg)
		p.Observe(step, rolled)
		for _, g := range trained {
			needs := w.Tasks[g.Task].Needs
			for _, s := range needs {
				cum[s] += 2 * g.Spread() / float64(len(needs))
			}
			envPicks[w.Tasks[g.Task].Env]++
		}
		l.Update(step, trained)
	}
	// weight of each skill in the held-out score: d Eval / d level, at the start.
	l0 := NewLearner(w)
	base := l0.Eval()
	wt := make([]float64, len(w.Init))
	for s := range wt {
		l0.level[s] += 1e-3
		wt[s] = (l0.Eval() - base) / 1e-3
		l0.level[s] -= 1e-3
	}
	var st spreadStat
	sum, sq := 0.0, 0.0
	for s, c := range cum {
		sum += c
		sq += c * c
		st.valued += c * wt[s]
		st.gain += l.level[s] - w.Init[s]
		st.heldGain += (l.level[s] - w.Init[s]) * wt[s]
	}
	st.signal = sum
	st.eval, st.evalTasks = l.Eval(), l.EvalTasks()
	st.eff = sum * sum / sq
	st.valued /= sum
	// envSpread: effective number of environments the batch went to
	es, eq := 0.0, 0.0
	for _, c := range envPicks {
		es += c
		eq += c * c
	}
	st.envSpread = es * es / eq
	return st
}

func TestAnalysisSkillSpread(t *testing.T) {
	sc, err := ScenarioFor(os.Getenv("HL_SCENARIO"), "../../shared/data/catalog-real.jsonl")
	if err != nil {
		t.Skip(err)
	}
	cfg := Config{Scenario: sc, BatchSize: 64, GroupSize: 8, Steps: 40}
	pols := []string{"envsched", "envsched-truth", "random", "oracle"}
	ep := DefaultEnvschedParams()
	if v, err := strconv.ParseFloat(os.Getenv("HL_PEN"), 64); err == nil {
		ep.Select.SimPenalty = v
	}
	if v, err := strconv.ParseFloat(os.Getenv("HL_COV"), 64); err == nil {
		ep.Select.CoverageWeight = v
	}
	if v, err := strconv.ParseFloat(os.Getenv("HL_TRANSFER"), 64); err == nil {
		ep.Select.Transfer = v
	}
	if v, err := strconv.ParseFloat(os.Getenv("HL_OVERLAP"), 64); err == nil {
		ep.Select.Overlap = v
	}
	if os.Getenv("HL_ONLY") != "" {
		pols = []string{os.Getenv("HL_ONLY")}
	}
	cfg.Envsched = &ep
	seeds := envInt("HL_SEEDS", 6)
	base := uint64(envInt("HL_SEED_BASE", 1000))
	for k := range seeds {
		w := NewWorld(sc, base+uint64(k))
		for _, pol := range pols {
			st := skillSpread(t, w, pol, cfg, 40)
			t.Logf("seed %d %-9s signal %6.1f eff.skills %5.1f valued/signal %.4f gain %6.2f held-gain %.4f eff.envs %5.1f eval %.4f task %.4f",
				base+uint64(k), pol, st.signal, st.eff, st.valued, st.gain, st.heldGain, st.envSpread, st.eval, st.evalTasks)
		}
	}
}
