//go:build analysis

// The analyses of this file measure where envsched's predictions fall short on the simulator;
// their figures are in BENCHMARKS.md. They are measurements, not tests: run them with
//
//	go test -tags analysis -run Analysis -v ./sim/
//
// ANALYSIS_TRUTH=fresh|tried|all hands the batcher the true probabilities of the tasks never
// rolled out, of those rolled out before, or of all (the decomposition of the gap);
// ANALYSIS_TRUTH=textbound hands it, for the tasks never rolled out, the true probability
// without the part of the difficulty that no text tells (Task.hidden): the bound of any
// model of the catalogue. ANALYSIS_TRUTH=neigh moves the prediction of each task never rolled out by the weighted mean
// gap between the true and the predicted logits of its neighbours that were rolled out: the
// best that borrowing from neighbours could do.
package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/envsched/envsched/batcher"
	"github.com/envsched/envsched/propagate"
	"gonum.org/v1/gonum/mat"
)

// TestAnalysisPredictionOnPicks runs envsched on the tuning seeds 1000-1009 for 40 steps and
// compares, for the tasks it picked, the predicted chance of a degenerate group with the true
// chance and with what happened, by phase and by whether the task had been rolled out before.
func TestAnalysisPredictionOnPicks(t *testing.T) {
	type sums struct{ n, pred, truth, real, predMean, trueMean float64 }
	cats := map[string]*sums{}
	mode := os.Getenv("ANALYSIS_TRUTH")
	cfg := Config{Scenario: DefaultScenario(), BatchSize: 64, GroupSize: 8, Steps: 40}
	var score float64
	const seeds = 10
	for seed := uint64(1000); seed < 1000+seeds; seed++ {
		w, es, l := analysisRun(t, cfg, seed)
		for step := 1; step <= cfg.Steps; step++ {
			preds, err := es.predict(int64(step))
			if err != nil {
				t.Fatal(err)
			}
			if mode == "neigh" {
				for i := range preds {
					if es.tasks[i].Rollouts != 0 {
						continue
					}
					// the environment prior's logit plus the weighted mean deviation of the
					// true logits of the neighbours that were rolled out
					m := preds[i].Mean
					var sw, sd float64
					for _, ed := range es.g.Neighbors(i) {
						if es.tasks[ed.To].Rollouts == 0 {
							continue
						}
						sw += float64(ed.Weight)
						sd += float64(ed.Weight) * (logit(l.P(es.task[ed.To])) - logit(preds[ed.To].Mean))
					}
					if sw > 0 {
						m = 1 / (1 + math.Exp(-(logit(m) + sd/(sw+0.5))))
					}
					k := preds[i].Alpha + preds[i].Beta
					a, b := k*m, k*(1-m)
					preds[i] = propagate.Prediction{Alpha: a, Beta: b, Mean: m, Var: propagate.BetaVariance(a, b),
						Own: preds[i].Own, Borrowed: preds[i].Borrowed}
					preds[i].PDeg = preds[i].PDegenerate(cfg.GroupSize)
				}
			}
			if mode == "textbound" {
				// for a task never rolled out, the true probability less the part of its
				// difficulty that no text tells: the best any model of the catalogue could do
				for i := range preds {
					if es.tasks[i].Rollouts != 0 {
						continue
					}
					tk := w.Tasks[es.task[i]]
					tk.Difficulty -= tk.hidden
					q := l.prob(&tk, l.memory[w.root(es.task[i])])
					a, b := truthCount*q, truthCount*(1-q)
					preds[i] = propagate.Prediction{Alpha: a, Beta: b, Mean: q, Var: propagate.BetaVariance(a, b),
						Own: preds[i].Own, Borrowed: preds[i].Borrowed}
					preds[i].PDeg = preds[i].PDegenerate(cfg.GroupSize)
				}
			}
			for i := range preds {
				fresh := es.tasks[i].Rollouts == 0
				if mode == "all" || mode == "fresh" && fresh || mode == "tried" && !fresh {
					q := l.P(es.task[i])
					a, b := truthCount*q, truthCount*(1-q)
					preds[i] = propagate.Prediction{Alpha: a, Beta: b, Mean: q, Var: propagate.BetaVariance(a, b),
						Own: preds[i].Own, Borrowed: preds[i].Borrowed}
					preds[i].PDeg = preds[i].PDegenerate(cfg.GroupSize)
				}
			}
			req := batcher.Request{Size: cfg.BatchSize, GroupSize: cfg.GroupSize, Step: int64(step), Seed: mix(es.seed ^ uint64(step)<<20)}
			b, err := batcher.Select(es.g, preds, es.tasks, req, es.params.Select)
			if err != nil {
				t.Fatal(err)
			}
			var groups []Group
			for _, pk := range b.Picks {
				ti := es.task[pk.Node]
				p := l.P(ti)
				g := l.Rollout(ti, step, 0, cfg.GroupSize)
				groups = append(groups, g)
				cat := "steps 1-10"
				if step > 10 {
					cat = "steps 11-40"
				}
				if es.tasks[pk.Node].Rollouts == 0 {
					cat += ", never rolled out"
				} else {
					cat += ", rolled out before"
				}
				s := cats[cat]
				if s == nil {
					s = &sums{}
					cats[cat] = s
				}
				s.n++
				s.pred += preds[pk.Node].PDeg
				s.truth += math.Pow(p, float64(cfg.GroupSize)) + math.Pow(1-p, float64(cfg.GroupSize))
				if g.Degenerate() {
					s.real++
				}
				s.predMean += preds[pk.Node].Mean
				s.trueMean += p
				es.tasks[pk.Node].Chosen++
				es.tasks[pk.Node].LastChosen = int64(step)
			}
			es.Observe(step, groups)
			l.Update(step, groups)
		}
		score += l.Eval() / seeds
	}
	if len(cats) == 0 {
		t.Fatal("no picks")
	}
	t.Logf("truth handed to the batcher: %q; mean held-out score at step 40: %.3f", mode, score)
	t.Logf("%-34s %6s %10s %10s %10s %10s %10s", "picks", "n", "P(deg)", "true", "realised", "mean", "true mean")
	var names []string
	for c := range cats {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		s := cats[c]
		t.Logf("%-34s %6.0f %10.3f %10.3f %10.3f %10.3f %10.3f", c, s.n, s.pred/s.n, s.truth/s.n, s.real/s.n, s.predMean/s.n, s.trueMean/s.n)
	}
}

// TestAnalysisTextInformation measures how much of the spread of the tasks' starting success
// (on the logit scale, within an environment) the catalogue can tell at best: from the true
// logits of a task's graph neighbours, and from a ridge regression on the words, tools and
// environment of the task fitted to the true logits of a random tenth of the tasks.
func TestAnalysisTextInformation(t *testing.T) {
	cfg := Config{Scenario: DefaultScenario(), BatchSize: 64, GroupSize: 8, Steps: 40}
	var within, neigh, ridgeEnv, ridge, n, nr float64
	for seed := uint64(1000); seed < 1004; seed++ {
		w, es, l := analysisRun(t, cfg, seed)
		lg := make([]float64, len(w.Tasks))
		for i := range lg {
			lg[i] = logit(l.P(i))
		}
		envMean := make([]float64, len(w.Envs))
		for e, ts := range w.EnvTasks {
			for _, i := range ts {
				envMean[e] += lg[i] / float64(len(ts))
			}
		}
		for i := range es.g.Nodes {
			ti := es.task[i]
			em := envMean[w.Tasks[ti].Env]
			var sw, sl float64
			for _, ed := range es.g.Neighbors(i) {
				sw += float64(ed.Weight)
				sl += float64(ed.Weight) * (lg[es.task[ed.To]] - envMean[w.Tasks[es.task[ed.To]].Env])
			}
			pred := em
			if sw > 0 {
				pred += sl / (sw + 0.5)
			}
			within += (lg[ti] - em) * (lg[ti] - em)
			neigh += (lg[ti] - pred) * (lg[ti] - pred)
			n++
		}
		re, rr, m := ridgeFit(w, lg, rand.New(rand.NewPCG(seed, 7)), 0.1)
		ridgeEnv += re
		ridge += rr
		nr += m
	}
	if n == 0 || nr == 0 {
		t.Fatal("no tasks")
	}
	t.Logf("within-environment variance of the starting logit: %.2f", within/n)
	t.Logf("left after the weighted mean of the true logits of the graph neighbours: %.2f", neigh/n)
	t.Logf("a tenth of the tasks known: left after their environment mean %.2f, after a ridge regression on words %.2f", ridgeEnv/nr, ridge/nr)
}

func logit(p float64) float64 { return math.Log(p / (1 - p)) }

// analysisRun returns the world of seed, a fresh envsched policy and a fresh learner for it.
func analysisRun(t *testing.T, cfg Config, seed uint64) (*World, *envschedPolicy, *Learner) {
	t.Helper()
	w := NewWorld(cfg.Scenario, seed)
	pol, err := NewPolicy("envsched", w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w, pol.(*envschedPolicy), NewLearner(w)
}

// ridgeFit fits logits on the words, tools and environment of a share frac of the tasks and
// returns the squared errors on the others of their environment's mean and of the fit.
func ridgeFit(w *World, lg []float64, rng *rand.Rand, frac float64) (sseEnv, sseRidge, n float64) {
	vocab := map[string]int{}
	docs := make([][]int, len(w.Tasks))
	for i, tk := range w.Tasks {
		words := append(strings.Fields(strings.ToLower(tk.Record.Text)), tk.Record.Tools...)
		seen := map[int]bool{}
		for _, wd := range append(words, "env:"+tk.Record.Env) {
			wd = strings.Trim(wd, ".,;:!?\"'()")
			id, ok := vocab[wd]
			if !ok {
				id = len(vocab)
				vocab[wd] = id
			}
			if !seen[id] {
				seen[id] = true
				docs[i] = append(docs[i], id)
			}
		}
	}
	var train []int
	known := make([]bool, len(w.Tasks))
	for i := range w.Tasks {
		if rng.Float64() < frac {
			train, known[i] = append(train, i), true
		}
	}
	d := len(vocab) + 1
	x := mat.NewDense(len(train), d, nil)
	y := mat.NewVecDense(len(train), nil)
	for r, i := range train {
		x.Set(r, d-1, 1)
		for _, f := range docs[i] {
			x.Set(r, f, 1)
		}
		y.SetVec(r, lg[i])
	}
	var xtx mat.Dense
	xtx.Mul(x.T(), x)
	for k := range d {
		xtx.Set(k, k, xtx.At(k, k)+1)
	}
	var xty, beta mat.VecDense
	xty.MulVec(x.T(), y)
	if err := beta.SolveVec(&xtx, &xty); err != nil {
		panic(fmt.Sprint("ridge: ", err))
	}
	envSum := make([]float64, len(w.Envs))
	envN := make([]float64, len(w.Envs))
	for _, i := range train {
		envSum[w.Tasks[i].Env] += lg[i]
		envN[w.Tasks[i].Env]++
	}
	for i := range w.Tasks {
		if known[i] {
			continue
		}
		pred := beta.AtVec(d - 1)
		for _, f := range docs[i] {
			pred += beta.AtVec(f)
		}
		em := 0.0
		if e := w.Tasks[i].Env; envN[e] > 0 {
			em = envSum[e] / envN[e]
		}
		sseEnv += (lg[i] - em) * (lg[i] - em)
		sseRidge += (lg[i] - pred) * (lg[i] - pred)
		n++
	}
	return sseEnv, sseRidge, n
}
