//go:build analysis

package sim

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/envsched/envsched/batcher"
	"github.com/envsched/envsched/propagate"
)

// TestAnalysisEarlyRandomSlots splits the random slots of steps 1-10 on tuning seeds by step,
// by whether their task was tried, by how many groups of their environment the dispersion
// correction had measured, by how many random groups it had and by their predicted mean, and
// prints the mean predicted chance of a degenerate group as answered (Predictor.Pick), as the
// channel predicts it, without any correction, the truth and the realised share, then the
// mean predicted success (before the correction), the true one and the realised one. It is
// how calib4 found that random slots were answered too degenerate from step 2 on, in every
// scenario, by their means' departures from an environment centre made of one or two groups
// (BENCHMARKS.md, "calib4").
//
//	CALIB_SCENARIO=small-envs nice -n 19 go test -tags analysis -run AnalysisEarlyRandomSlots -v ./sim/
func TestAnalysisEarlyRandomSlots(t *testing.T) {
	name := envOr("CALIB_SCENARIO", "small-envs")
	sc, err := ScenarioFor(name, envOr("TUNE_REAL", "../../shared/data/catalog-real.jsonl"))
	if err != nil {
		t.Skip(err)
	}
	seeds, _ := strconv.Atoi(envOr("CALIB_SEEDS", "20"))
	steps, _ := strconv.Atoi(envOr("CALIB_STEPS", "10"))
	type sums struct{ n, ans, ch, unc, truth, real, pm, pt, ps float64 }
	cells := map[string]*sums{}
	addTo := func(key string, ans, ch, unc, truth float64, deg bool, pm, pt, ps float64) {
		s := cells[key]
		if s == nil {
			s = &sums{}
			cells[key] = s
		}
		s.n++
		s.ans += ans
		s.ch += ch
		s.unc += unc
		s.truth += truth
		s.pm, s.pt, s.ps = s.pm+pm, s.pt+pt, s.ps+ps
		if deg {
			s.real++
		}
	}
	cfg := Config{Scenario: sc, BatchSize: 64, GroupSize: 8, Steps: steps}
	for seed := uint64(1000); seed < 1000+uint64(seeds); seed++ {
		_, es, l := analysisRun(t, cfg, seed)
		for step := 1; step <= cfg.Steps; step++ {
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
			d := es.state.Dispersion
			for _, pk := range b.Picks {
				ti := es.task[pk.Node]
				tried := es.tasks[pk.Node].Rollouts > 0
				es.state.Baseline[pk.Node].Random = pk.Random
				g := l.Rollout(ti, step, 0, cfg.GroupSize)
				groups = append(groups, g)
				if pk.Random {
					p := l.P(ti)
					base := es.state.Baseline[pk.Node]
					ans := es.pred.Pick(es.state, preds[pk.Node], tried, true).PDegenerate(cfg.GroupSize)
					c, m := base.Count, base.Pred
					unc := propagate.BetaBinomialDegenerate(c*m, c*(1-m), cfg.GroupSize)
					env := es.g.Envs[es.g.Nodes[pk.Node].Env]
					envN := 0.0
					if e := d.Env[env]; e != nil {
						envN = e.N
					}
					rndN := 0.0
					if d.Random != nil {
						rndN = d.Random.N
					}
					stepKey := "step 1"
					if step > 1 {
						stepKey = "steps 2-10"
					}
					perStep := fmt.Sprintf("step %02d", step)
					envKey := "env 0"
					switch {
					case envN >= 8:
						envKey = "env 8+"
					case envN > 0:
						envKey = "env <8"
					}
					rndKey := fmt.Sprintf("rnd %s", bucket(rndN, []float64{1, 8, 16, 32}))
					kind := "new"
					if tried {
						kind = "tried"
					}
					truth := math.Pow(p, 8) + math.Pow(1-p, 8)
					for _, k := range []string{"all", perStep, stepKey, stepKey + " | " + kind, stepKey + " | " + kind + " | " + envKey,
						stepKey + " | " + rndKey, fmt.Sprintf("mean %s", bucket(base.Pred, []float64{0.1, 0.25, 0.4, 0.6, 0.75, 0.9}))} {
						addTo(k, ans, preds[pk.Node].PDegenerate(cfg.GroupSize), unc, truth, g.Degenerate(), base.Pred, p, float64(g.Successes)/float64(g.Size))
					}
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
	fmt.Fprintf(os.Stdout, "scenario %s, seeds 1000-%d, steps 1-%d, random slots: groups, answered, channel, uncorrected, truth, realised (gap answered-realised); mean predicted / true / realised success\n", name, 999+seeds, steps)
	for _, k := range keys {
		s := cells[k]
		fmt.Printf("%-40s %6.0f  %.3f  %.3f  %.3f  %.3f  %.3f  (%+.3f)  %.3f %.3f %.3f\n", strings.ReplaceAll(k, "\t", " | "), s.n, s.ans/s.n, s.ch/s.n, s.unc/s.n, s.truth/s.n, s.real/s.n, (s.ans-s.real)/s.n, s.pm/s.n, s.pt/s.n, s.ps/s.n)
	}
}

// bucket names the interval of edges that x falls in.
func bucket(x float64, edges []float64) string {
	lo := "0"
	for _, e := range edges {
		if x < e {
			return fmt.Sprintf("[%s,%g)", lo, e)
		}
		lo = strconv.FormatFloat(e, 'g', -1, 64)
	}
	return lo + "+"
}
