//go:build analysis

package sim

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/envsched/envsched/batcher"
	"github.com/envsched/envsched/propagate"
)

// TestAnalysisCalibrationByMean splits envsched's picks on tuning seeds 1000-1009 by how they
// were chosen (random slot or not, tried before or not) and by the distance of their
// predicted mean from ½ (|logit|, before the dispersion correction), and prints for each the
// mean predicted chance of a degenerate group with the correction, without it (the Beta of
// the prediction's mean and count before it), the true chance and the realised share: whether
// a correction that depends on the mean can serve random slots and chosen picks alike.
//
//	CALIB_SCENARIO=default nice -n 19 go test -tags analysis -run AnalysisCalibrationByMean -v ./sim/
func TestAnalysisCalibrationByMean(t *testing.T) {
	name := envOr("CALIB_SCENARIO", "default")
	sc, err := ScenarioFor(name, envOr("TUNE_REAL", "../../shared/data/catalog-real.jsonl"))
	if err != nil {
		t.Skip(err)
	}
	type sums struct{ n, corr, unc, truth, real float64 }
	cells := map[string]*sums{}
	cfg := Config{Scenario: sc, BatchSize: 64, GroupSize: 8, Steps: 120}
	for seed := uint64(1000); seed < 1010; seed++ {
		_, es, l := analysisRun(t, cfg, seed)
		for step := 1; step <= cfg.Steps; step++ {
			preds, err := es.predict(int64(step))
			if err != nil {
				t.Fatal(err)
			}
			req := batcher.Request{Size: cfg.BatchSize, GroupSize: cfg.GroupSize, Step: int64(step), Seed: mix(es.seed ^ uint64(step)<<20)}
			sel := es.params.Select
			sel.CoverageWeight *= es.state.ExplorationReturn()
			b, err := batcher.Select(es.g, preds, es.tasks, req, sel)
			if err != nil {
				t.Fatal(err)
			}
			nodes := make([]int, len(b.Picks))
			for i, pk := range b.Picks {
				nodes[i] = pk.Node
			}
			base := propagate.Baselines(es.g, es.tasks, preds, nodes)
			var groups []Group
			for i, pk := range b.Picks {
				ti := es.task[pk.Node]
				p := l.P(ti)
				g := l.Rollout(ti, step, 0, cfg.GroupSize)
				groups = append(groups, g)
				kind := "chosen"
				if pk.Random {
					kind = "random"
				}
				if es.tasks[pk.Node].Rollouts == 0 {
					kind += " new"
				} else {
					kind += " tried"
				}
				x := math.Abs(math.Log(base[i].Pred / (1 - base[i].Pred)))
				bin := "|logit| 0-0.5"
				switch {
				case x >= 2:
					bin = "|logit| 2+"
				case x >= 1:
					bin = "|logit| 1-2"
				case x >= 0.5:
					bin = "|logit| 0.5-1"
				}
				phase := "1-10"
				if step > 10 {
					phase = "11+"
				}
				key := phase + "\t" + kind + "\t" + bin
				s := cells[key]
				if s == nil {
					s = &sums{}
					cells[key] = s
				}
				s.n++
				s.corr += preds[pk.Node].PDegenerate(cfg.GroupSize)
				c, m := base[i].Count, base[i].Pred
				s.unc += propagate.BetaBinomialDegenerate(c*m, c*(1-m), cfg.GroupSize)
				s.truth += math.Pow(p, 8) + math.Pow(1-p, 8)
				if g.Degenerate() {
					s.real++
				}
				es.tasks[pk.Node].Chosen++
				es.tasks[pk.Node].LastChosen = int64(step)
			}
			es.Observe(step, groups)
			l.Update(step, groups)
		}
	}
	keys := make([]string, 0, len(cells))
	for k := range cells {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(os.Stdout, "scenario %s: phase, pick, bin: groups, predicted with / without correction, truth, realised\n", name)
	for _, k := range keys {
		s := cells[k]
		fmt.Printf("%s\t%6.0f\t%.3f\t%.3f\t%.3f\t%.3f\n", strings.ReplaceAll(k, "\t", " | "), s.n, s.corr/s.n, s.unc/s.n, s.truth/s.n, s.real/s.n)
	}
}
