//go:build analysis

// TestAnalysisRecency measures how soon envsched re-picks a task whose last group was unequal,
// and how often such re-picks waste their group, by the steps since that group; its figures are
// in BENCHMARKS.md ("Fresh evidence first"). A measurement, not a test:
//
//	ANALYSIS_SCENARIO=bimodal go test -tags analysis -run AnalysisRecency -v ./sim/
//
// ANALYSIS_FRESH sets batcher Params.Fresh; ANALYSIS_SEED_BASE (1000), ANALYSIS_SEEDS (20),
// ANALYSIS_STEPS (120).
package sim

import (
	"os"
	"strconv"
	"testing"
)

// recencyRun counts, for one seed: unequal groups followed by a next step (next), of those the
// tasks re-picked in that next step (nextPicked); and re-picks of tasks whose last group was
// unequal, by gap bucket, with the degenerate ones among them.
type recencyRun struct {
	next, nextPicked float64
	picks, deg       [4]float64 // gap 1, 2-3, 4-9, >= 10
}

func gapBucket(g int) int {
	switch {
	case g <= 1:
		return 0
	case g <= 3:
		return 1
	case g <= 9:
		return 2
	}
	return 3
}

func TestAnalysisRecency(t *testing.T) {
	sc, err := ScenarioFor(os.Getenv("ANALYSIS_SCENARIO"), "../../shared/data/catalog-real.jsonl")
	if err != nil {
		t.Skip(err)
	}
	fresh, _ := strconv.ParseFloat(os.Getenv("ANALYSIS_FRESH"), 64)
	base, seeds, steps := uint64(envInt("ANALYSIS_SEED_BASE", 1000)), envInt("ANALYSIS_SEEDS", 20), envInt("ANALYSIS_STEPS", 120)
	cfg := Config{Scenario: sc, BatchSize: 64, GroupSize: 8, Steps: steps}
	runs := seedRuns(seeds, func(k int) recencyRun { return recencyOne(t, cfg, base+uint64(k), fresh) })
	var tot recencyRun
	for _, r := range runs {
		tot.next += r.next
		tot.nextPicked += r.nextPicked
		for b := range tot.picks {
			tot.picks[b] += r.picks[b]
			tot.deg[b] += r.deg[b]
		}
	}
	t.Logf("%s fresh=%g: unequal groups re-picked the next step: %.1f%% of %.0f", sc.Name, fresh, 100*tot.nextPicked/tot.next, tot.next)
	for b, name := range []string{"gap 1", "gap 2-3", "gap 4-9", "gap >= 10"} {
		if tot.picks[b] > 0 {
			t.Logf("  re-picks after an unequal group, %-9s: %6.0f picks, %.1f%% degenerate", name, tot.picks[b], 100*tot.deg[b]/tot.picks[b])
		}
	}
}

func recencyOne(t *testing.T, cfg Config, seed uint64, fresh float64) recencyRun {
	w, es, l := analysisRun(t, cfg, seed)
	es.params.Select.Fresh = fresh
	var r recencyRun
	lastStep := map[int]int{}     // task -> step of its last group
	lastUnequal := map[int]bool{} // task -> whether that group was unequal
	for step := 1; step <= cfg.Steps; step++ {
		v := &View{Step: step, Size: cfg.BatchSize, Group: cfg.GroupSize, World: w,
			Rand: stepRand(w.Seed, "envsched", step), truth: l.P}
		chosen, err := es.Choose(v)
		if err != nil {
			t.Error(err)
			return r
		}
		picked := map[int]bool{}
		for _, c := range chosen {
			picked[c] = true
		}
		if step > 1 {
			for task, s := range lastStep {
				if s == step-1 && lastUnequal[task] {
					r.next++
					if picked[task] {
						r.nextPicked++
					}
				}
			}
		}
		rolled, trained := rollOut(l, es, chosen, step, cfg)
		for _, g := range rolled {
			if s, ok := lastStep[g.Task]; ok && lastUnequal[g.Task] {
				b := gapBucket(step - s)
				r.picks[b]++
				if g.Degenerate() {
					r.deg[b]++
				}
			}
			lastStep[g.Task], lastUnequal[g.Task] = step, !g.Degenerate()
		}
		es.Observe(step, rolled)
		l.Update(step, trained)
	}
	return r
}
