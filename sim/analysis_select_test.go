//go:build analysis

// TestAnalysisWasteByChannel measures where envsched's degenerate groups come from and what
// bounds the information it has puts on them; its figures are in BENCHMARKS.md ("Selection:
// where the degenerate groups come from"). A measurement, not a test:
//
//	ANALYSIS_SCENARIO=bimodal ANALYSIS_TRUTH=tried go test -tags analysis -run AnalysisWasteByChannel -v ./sim/
//
// ANALYSIS_TRUTH: "" (envsched's own predictions), "tried" (the batcher gets the true success
// probability of every task rolled out before, envsched's prediction for the others: the most
// that rollouts could ever tell), "all" (every task's truth: envsched-truth).
// ANALYSIS_RANDOM_SHARE and ANALYSIS_COVERAGE override the random share and the coverage
// weight (after the exploration return), ANALYSIS_EXPLOIT=informative the exploit measure.
// ANALYSIS_SEED_BASE (1000) and ANALYSIS_SEEDS (20), ANALYSIS_STEPS (120).
package sim

import (
	"math"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/envsched/envsched/batcher"
	"github.com/envsched/envsched/propagate"
)

type wasteCell struct{ picks, deg, pred, truth float64 }

type wasteRun struct {
	cells  map[string]*wasteCell
	groups float64
	deg    float64
	score  []float64 // held-out score after each step
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func TestAnalysisWasteByChannel(t *testing.T) {
	sc, err := ScenarioFor(os.Getenv("ANALYSIS_SCENARIO"), "../../shared/data/catalog-real.jsonl")
	if err != nil {
		t.Skip(err)
	}
	mode := os.Getenv("ANALYSIS_TRUTH")
	base, seeds, steps := uint64(envInt("ANALYSIS_SEED_BASE", 1000)), envInt("ANALYSIS_SEEDS", 20), envInt("ANALYSIS_STEPS", 120)
	cfg := Config{Scenario: sc, BatchSize: 64, GroupSize: 8, Steps: steps}
	runs := seedRuns(seeds, func(k int) wasteRun { return wasteOne(t, cfg, base+uint64(k), mode) })
	total := map[string]*wasteCell{}
	var groups, deg float64
	var at40, best []float64
	for _, r := range runs {
		for c, x := range r.cells {
			if total[c] == nil {
				total[c] = &wasteCell{}
			}
			total[c].picks += x.picks
			total[c].deg += x.deg
			total[c].pred += x.pred
			total[c].truth += x.truth
		}
		groups += r.groups
		deg += r.deg
		at40 = append(at40, r.score[min(40, len(r.score)-1)])
		b := 0.0
		for _, s := range r.score {
			b = max(b, s)
		}
		best = append(best, b)
	}
	t.Logf("scenario %s, truth %q, seeds %d-%d, %d steps: degenerate %.1f%%, median step-40 score %.3f, best %.3f",
		sc.Name, mode, base, base+uint64(seeds)-1, steps, 100*deg/groups, median(at40), median(best))
	t.Logf("%-32s %7s %7s %9s %9s %9s", "channel", "picks%", "deg%", "of all%", "pred deg", "true deg")
	var names []string
	for c := range total {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		x := total[c]
		t.Logf("%-32s %7.1f %7.1f %9.1f %9.3f %9.3f", c, 100*x.picks/groups, 100*x.deg/x.picks, 100*x.deg/groups, x.pred/x.picks, x.truth/x.picks)
	}
}

// wasteOne runs envsched on one seed as its Choose does, with the truth handed to the batcher
// as mode says, and sums its picks by channel and phase.
func wasteOne(t *testing.T, cfg Config, seed uint64, mode string) wasteRun {
	w, es, l := analysisRun(t, cfg, seed)
	r := wasteRun{cells: map[string]*wasteCell{}, score: []float64{l.Eval()}}
	for step := 1; step <= cfg.Steps; step++ {
		preds, err := es.predict(int64(step))
		if err != nil {
			t.Error(err)
			return r
		}
		for i := range preds {
			if mode == "all" || mode == "tried" && es.tasks[i].Rollouts > 0 {
				q := l.P(es.task[i])
				a, b := truthCount*q, truthCount*(1-q)
				preds[i] = propagate.Prediction{Alpha: a, Beta: b, Mean: q, Var: propagate.BetaVariance(a, b),
					Own: preds[i].Own, Borrowed: preds[i].Borrowed}
				preds[i].PDeg = preds[i].PDegenerate(cfg.GroupSize)
			}
		}
		sel := es.selectParams()
		if v, err := strconv.ParseFloat(os.Getenv("ANALYSIS_RANDOM_SHARE"), 64); err == nil {
			sel.RandomShare = v
		}
		if v, err := strconv.ParseFloat(os.Getenv("ANALYSIS_COVERAGE"), 64); err == nil {
			sel.CoverageWeight = v
		}
		if os.Getenv("ANALYSIS_EXPLOIT") == "informative" {
			sel.Exploit = batcher.ExploitInformative
		}
		req := batcher.Request{Size: cfg.BatchSize, GroupSize: cfg.GroupSize, Step: int64(step), Seed: mix(es.seed ^ uint64(step)<<20)}
		b, err := batcher.Select(es.g, preds, es.tasks, req, sel)
		if err != nil {
			t.Error(err)
			return r
		}
		var groups []Group
		for _, pk := range b.Picks {
			es.state.Baseline[pk.Node].Random = pk.Random
			ti := es.task[pk.Node]
			p := l.P(ti)
			g := l.Rollout(ti, step, 0, cfg.GroupSize)
			groups = append(groups, g)
			c := r.cell(wasteChannel(pk, es.tasks[pk.Node].Rollouts, b, es, w) + ", " + phaseOf(step))
			c.picks++
			c.pred += preds[pk.Node].PDegenerate(cfg.GroupSize)
			c.truth += math.Pow(p, float64(cfg.GroupSize)) + math.Pow(1-p, float64(cfg.GroupSize))
			r.groups++
			if g.Degenerate() {
				c.deg++
				r.deg++
			}
			es.tasks[pk.Node].Chosen++
			es.tasks[pk.Node].LastChosen = int64(step)
		}
		es.Observe(step, groups)
		l.Update(step, groups)
		r.score = append(r.score, l.Eval())
	}
	return r
}

func (r *wasteRun) cell(name string) *wasteCell {
	if r.cells[name] == nil {
		r.cells[name] = &wasteCell{}
	}
	return r.cells[name]
}

func phaseOf(step int) string {
	switch {
	case step <= 10:
		return "1-10"
	case step <= 40:
		return "11-40"
	}
	return "41+"
}

// wasteChannel names how a pick came: a random slot, a task never tried (new environment or
// not), or a task tried before chosen for its exploitation value or for coverage.
func wasteChannel(pk batcher.Pick, rollouts int64, _ batcher.Batch, _ *envschedPolicy, _ *World) string {
	switch {
	case pk.Random:
		return "random slot"
	case rollouts == 0 && pk.Reason == "new environment; env prior":
		return "new env"
	case rollouts == 0:
		return "never tried"
	case pk.Exploit >= pk.Coverage:
		return "re-chosen, exploit"
	}
	return "re-chosen, coverage"
}

// seedRuns runs one(k) for k in 0..seeds-1, two at a time (the analysis tests' seeds), and
// returns the results in seed order.
func seedRuns[T any](seeds int, one func(k int) T) []T {
	runs := make([]T, seeds)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for k := range seeds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			runs[k] = one(k)
		}()
	}
	wg.Wait()
	return runs
}
