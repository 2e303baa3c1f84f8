//go:build analysis

package sim

import (
	"fmt"
	"math"
	"os"
	"sort"
	"testing"

	"github.com/envsched/envsched/batcher"
	"gonum.org/v1/gonum/mat"
)

// TestAnalysisWhereWrong runs envsched exactly as its policy does (predictions, selection,
// the pick corrections) on the tuning seeds 1000-1019 for PD_STEPS steps (default 40) of
// the scenario PD_SCENARIO, and splits its picks by channel, phase and, for tasks rolled out
// before, by the rounds since their last rollout and by their share of successes so far:
// for each cell the predicted and true mean, the predicted (as selection read it and as
// answered) and true chance of a degenerate group, and what came back. The mean logit error
// (true − predicted) shows whether an error grows with the age of the evidence.
func TestAnalysisWhereWrong(t *testing.T) {
	sc, err := ScenarioFor(os.Getenv("PD_SCENARIO"), "../../shared/data/catalog-real.jsonl")
	if err != nil {
		t.Skip(err)
	}
	steps := envInt("PD_STEPS", 40)
	seeds := envInt("PD_SEEDS", 20)
	cfg := Config{Scenario: sc, BatchSize: 64, GroupSize: 8, Steps: steps}
	type sums struct{ n, pm, tm, pd, pa, td, real, lerr float64 }
	cells := map[string]*sums{}
	add := func(key string, pm, tm, pd, pa, td, lerr float64, deg bool) {
		s := cells[key]
		if s == nil {
			s = &sums{}
			cells[key] = s
		}
		s.n++
		s.pm, s.tm, s.pd, s.pa, s.td, s.lerr = s.pm+pm, s.tm+tm, s.pd+pd, s.pa+pa, s.td+td, s.lerr+lerr
		if deg {
			s.real++
		}
	}
	var score float64
	xtx, xty := make([]float64, 16), make([]float64, 4)
	var yy, ny float64
	for seed := uint64(1000); seed < 1000+uint64(seeds); seed++ {
		_, es, l := analysisRun(t, cfg, seed)
		for step := 1; step <= steps; step++ {
			preds, err := es.predict(int64(step))
			if err != nil {
				t.Fatal(err)
			}
			req := batcher.Request{Size: cfg.BatchSize, GroupSize: cfg.GroupSize, Step: int64(step), Seed: mix(es.seed ^ uint64(step)<<20)}
			b, err := batcher.Select(es.g, preds, es.tasks, req, es.selectParams())
			if err != nil {
				t.Fatal(err)
			}
			var groups []Group
			for _, pk := range b.Picks {
				ti, st := es.task[pk.Node], &es.tasks[pk.Node]
				es.state.Baseline[pk.Node].Random = pk.Random
				pr := es.pred.Pick(es.state, preds[pk.Node], st.Rollouts > 0, pk.Random)
				p := l.P(ti)
				g := l.Rollout(ti, step, 0, cfg.GroupSize)
				groups = append(groups, g)
				td := math.Pow(p, 8) + math.Pow(1-p, 8)
				pm := preds[pk.Node].Mean
				lerr := logit(clampP(p)) - logit(clampP(pm))
				ch := channelOf(pk, st).String()
				ph := phase4(step)
				add(fmt.Sprintf("%-11s %-8s", ch, ph), pm, p, preds[pk.Node].PDeg, pr.PDegenerate(8), td, lerr, g.Degenerate())
				if st.Rollouts > 0 && !pk.Random {
					age := int64(step) - st.LastStep
					add(fmt.Sprintf("re age %-4s %-8s", ageBin(age), ph), pm, p, preds[pk.Node].PDeg, pr.PDegenerate(8), td, lerr, g.Degenerate())
					add(fmt.Sprintf("re own %-4s %-8s", ownBin(st.Sum/float64(st.Rollouts)), ph), pm, p, preds[pk.Node].PDeg, pr.PDegenerate(8), td, lerr, g.Degenerate())
					add(fmt.Sprintf("re n %-6s %-8s", nBin(st.Rollouts), ph), pm, p, preds[pk.Node].PDeg, pr.PDegenerate(8), td, lerr, g.Degenerate())
					if step > 10 {
						own := (st.A + 0.5) / (st.A + st.B + 1)
						f := []float64{1, logit(own) - logit(clampP(pm)), math.Log2(float64(st.Rollouts) / 8), math.Log2(float64(age))}
						for r := range 4 {
							for c := range 4 {
								xtx[r*4+c] += f[r] * f[c]
							}
							xty[r] += f[r] * lerr
						}
						yy += lerr * lerr
						ny++
						add(fmt.Sprintf("x n %-5s own %-4s", nBin(st.Rollouts), ownBin(st.A/(st.A+st.B))), pm, p, preds[pk.Node].PDeg, pr.PDegenerate(8), td, lerr, g.Degenerate())
					}
				}
				st.Chosen++
				st.LastChosen = int64(step)
			}
			es.Observe(step, groups)
			l.Update(step, groups)
		}
		score += l.Eval() / float64(seeds)
	}
	for _, fs := range [][]int{{0}, {0, 1}, {0, 2}, {0, 3}, {0, 1, 2}, {0, 1, 2, 3}} {
		k := len(fs)
		a := mat.NewDense(k, k, nil)
		bv := mat.NewVecDense(k, nil)
		for r, fr := range fs {
			for c, fc := range fs {
				a.Set(r, c, xtx[fr*4+fc])
			}
			bv.SetVec(r, xty[fr])
		}
		var beta mat.VecDense
		if err := beta.SolveVec(a, bv); err != nil {
			t.Fatal(err)
		}
		sse := yy
		for r := range k {
			sse -= beta.AtVec(r) * bv.AtVec(r)
		}
		t.Logf("re-chosen 11+: features %v beta %v mse %.3f (none %.3f)", fs, mat.Formatted(beta.T()), sse/ny, yy/ny)
	}
	t.Logf("%s, seeds 1000-%d, %d steps; mean held-out score at the end %.4f", sc.Name, 999+seeds, steps, score)
	t.Logf("%-26s %6s %7s %7s %7s %7s %7s %7s %7s", "cell", "n", "mean", "true", "Pdeg", "answer", "true", "real", "lerr")
	var keys []string
	for k := range cells {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s := cells[k]
		t.Logf("%-26s %6.0f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %+7.3f", k, s.n, s.pm/s.n, s.tm/s.n, s.pd/s.n, s.pa/s.n, s.td/s.n, s.real/s.n, s.lerr/s.n)
	}
}

func clampP(p float64) float64 { return min(max(p, 1e-3), 1-1e-3) }

func phase4(step int) string {
	switch {
	case step <= 10:
		return "1-10"
	case step <= 20:
		return "11-20"
	case step <= 40:
		return "21-40"
	}
	return "41-"
}

func ageBin(a int64) string {
	switch {
	case a <= 1:
		return "1"
	case a <= 3:
		return "2-3"
	case a <= 7:
		return "4-7"
	case a <= 15:
		return "8-15"
	}
	return "16+"
}

func ownBin(m float64) string {
	switch {
	case m < 0.2:
		return "<.2"
	case m < 0.4:
		return "<.4"
	case m < 0.6:
		return "<.6"
	case m < 0.8:
		return "<.8"
	}
	return ">=.8"
}

func nBin(n int64) string {
	switch {
	case n <= 8:
		return "8"
	case n <= 16:
		return "16"
	case n <= 32:
		return "17-32"
	}
	return "33+"
}
