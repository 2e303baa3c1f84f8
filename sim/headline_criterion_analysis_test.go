//go:build analysis

// TestAnalysisHeadlineCriterion asks, per seed, how far envsched's step-40 score stands from
// random's best in 120 steps, how much of that distance is the criterion's own noise (random's
// best over other draws of random's choices on the same world; envsched's step 40 over other
// seeds of its random slots), and how much envsched would gain by knowing the truth of some of
// its tasks: every task (envsched-truth), the tasks it tried before, the tasks it never tried,
// every task in steps 1-10 only, or after step 10 only. A measurement, not a test:
//
//	H16_SCENARIO=default H16_SEEDS=20 go test -tags analysis -run AnalysisHeadlineCriterion -v -timeout 2h ./sim/
//
// H16_REAL names the real catalogue (../../shared/data/catalog-real.jsonl, relative to sim/).
// H16_SEED_BASE (1000), H16_SEEDS (20), H16_RANDOM (8 draws of random), H16_SALTS (4 draws
// of envsched's random slots), H16_MODES (comma-separated truth modes: all, tried, untried,
// early, late, textbound, knowable; default the first five), H16_OVERLAP (envsched's word
// overlap, batcher Params.Overlap, in every envsched run), H16_OUT (a JSON file of the per-seed figures).
package sim

import (
	"encoding/json"
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

type h16Run struct {
	Score, TaskScore []float64
	EnvAt40          []float64 // held-out score per environment after step 40
	Deg              float64   // degenerate share of steps 1-40
	DegEarly         float64   // of steps 1-10
	// picks of steps 1-40 by channel: never tried, re-chosen, random slot; and their degenerate counts
	Picks, PickDeg [3]float64
	EnvPicks       []float64 // picks of steps 1-40 per environment
	EnvDeg         []float64 // degenerate groups of steps 1-40 per environment
	Signal, Eff    float64   // learning signal on skills by step 40, effective skills
}

type h16Seed struct {
	Seed            uint64
	Env, Task       map[string]float64 // step-40 scores by run name; "random_best", "random_best#k"
	Runs            map[string]*h16Run
	RandomBests     []float64 // per environment weighting, one per draw of random
	RandomTasks     []float64
	EnvschedAlt     []float64 // envsched's step 40 with other seeds of its random slots
	EnvschedAltTask []float64
}

func h16Env(name string, def int) int { return envInt(name, def) }

// h16Scenario is the scenario H16_SCENARIO names (default: default), the real catalogue read
// from H16_REAL (../../shared/data/catalog-real.jsonl, relative to sim/); it skips the test
// when that file cannot be read.
func h16Scenario(t *testing.T) Scenario {
	real := "../../shared/data/catalog-real.jsonl"
	if f := os.Getenv("H16_REAL"); f != "" {
		real = f
	}
	sc, err := ScenarioFor(os.Getenv("H16_SCENARIO"), real)
	if err != nil {
		t.Skip(err)
	}
	return sc
}

func TestAnalysisHeadlineCriterion(t *testing.T) {
	sc := h16Scenario(t)
	base, seeds := uint64(h16Env("H16_SEED_BASE", 1000)), h16Env("H16_SEEDS", 20)
	nrand, nsalt := h16Env("H16_RANDOM", 8), h16Env("H16_SALTS", 4)
	modes := []string{"all", "tried", "untried", "early", "late"}
	if m := os.Getenv("H16_MODES"); m != "" {
		modes = strings.Split(m, ",")
		if m == "none" {
			modes = nil
		}
	}
	cfg := Config{Scenario: sc, BatchSize: 64, GroupSize: 8, Steps: 120}
	if v, err := strconv.ParseFloat(os.Getenv("H16_OVERLAP"), 64); err == nil {
		p := DefaultEnvschedParams()
		p.Select.Overlap = v
		cfg.Envsched = &p
	}
	res := seedRuns(seeds, func(k int) h16Seed {
		seed := base + uint64(k)
		w := NewWorld(sc, seed)
		out := h16Seed{Seed: seed, Env: map[string]float64{}, Task: map[string]float64{}, Runs: map[string]*h16Run{}}
		for r := range nrand {
			pol := "random"
			if r > 0 {
				pol = fmt.Sprintf("random#%d", r)
			}
			run := h16One(t, cfg, w, "random", pol, "", 0)
			b, bt := maxOf(run.Score), maxOf(run.TaskScore)
			out.RandomBests, out.RandomTasks = append(out.RandomBests, b), append(out.RandomTasks, bt)
			if r == 0 {
				out.Env["random_best"], out.Task["random_best"] = b, bt
				out.Runs["random"] = run
			}
		}
		out.Runs["envsched"] = h16One(t, cfg, w, "envsched", "envsched", "", 0)
		out.Runs["oracle"] = h16One(t, cfg, w, "oracle", "oracle", "", 0)
		for _, m := range modes {
			out.Runs["truth-"+m] = h16One(t, cfg, w, "envsched", "envsched", m, 0)
		}
		for s := 1; s < nsalt; s++ {
			run := h16One(t, cfg, w, "envsched", "envsched", "", uint64(s))
			out.EnvschedAlt, out.EnvschedAltTask = append(out.EnvschedAlt, run.Score[40]), append(out.EnvschedAltTask, run.TaskScore[40])
		}
		for n, r := range out.Runs {
			out.Env[n], out.Task[n] = r.Score[40], r.TaskScore[40]
		}
		return out
	})
	if f := os.Getenv("H16_OUT"); f != "" {
		b, _ := json.Marshal(res)
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// the criterion, per seed
	t.Logf("scenario %s, seeds %d-%d; margins = step 40 − random's best (official draw)", sc.Name, base, base+uint64(seeds)-1)
	t.Logf("%5s %8s %8s %8s %7s %7s %8s %8s %8s", "seed", "margin", "rb sd", "es sd", "P(win)", "Ptask", "truth", "oracle", "tmargin")
	var pw, pwt []float64
	var rsd, esd []float64
	for _, s := range res {
		m := s.Env["envsched"] - s.Env["random_best"]
		mt := s.Task["envsched"] - s.Task["random_best"]
		win, wint := 0.0, 0.0
		for i, b := range s.RandomBests {
			for _, e := range append([]float64{s.Env["envsched"]}, s.EnvschedAlt...) {
				if e > b {
					win++
				}
			}
			for _, e := range append([]float64{s.Task["envsched"]}, s.EnvschedAltTask...) {
				if e > s.RandomTasks[i] {
					wint++
				}
			}
		}
		n := float64(len(s.RandomBests) * (1 + len(s.EnvschedAlt)))
		pw, pwt = append(pw, win/n), append(pwt, wint/n)
		rsd = append(rsd, sd(s.RandomBests))
		esd = append(esd, sd(append([]float64{s.Env["envsched"]}, s.EnvschedAlt...)))
		t.Logf("%5d %+8.4f %8.4f %8.4f %7.2f %7.2f %+8.4f %+8.4f %+8.4f", s.Seed, m, sd(s.RandomBests), esd[len(esd)-1], win/n, wint/n,
			s.Env["truth-all"]-s.Env["random_best"], s.Env["oracle"]-s.Env["random_best"], mt)
	}
	t.Logf("expected share of seeds ahead over draws: per environment %.3f, per task %.3f; median sd of random's best within a seed %.4f, of envsched's step 40 %.4f",
		mean(pw), mean(pwt), median(rsd), median(esd))
	var bests []float64
	for _, s := range res {
		bests = append(bests, s.Env["random_best"])
	}
	t.Logf("sd of random's best across seeds %.4f", sd(bests))
	// the runs side by side
	names := []string{"random", "envsched", "oracle"}
	for _, m := range modes {
		names = append(names, "truth-"+m)
	}
	t.Logf("%-14s %7s %7s %7s %6s %8s %8s %6s %6s %6s %6s %6s %6s %7s %5s", "run", "@40", "ahead", "median", "taskA", "deg1-40", "deg1-10", "new%", "newdeg", "re%", "redeg", "rnd%", "rnddeg", "signal", "eff")
	for _, n := range names {
		var at, mg, deg, deg10, sig, eff []float64
		ahead, aheadT := 0, 0
		var pk, pd [3]float64
		for _, s := range res {
			r := s.Runs[n]
			at = append(at, r.Score[40])
			mg = append(mg, r.Score[40]-s.Env["random_best"])
			if r.Score[40] > s.Env["random_best"] {
				ahead++
			}
			if r.TaskScore[40] > s.Task["random_best"] {
				aheadT++
			}
			deg, deg10 = append(deg, r.Deg), append(deg10, r.DegEarly)
			sig, eff = append(sig, r.Signal), append(eff, r.Eff)
			for c := range 3 {
				pk[c] += r.Picks[c]
				pd[c] += r.PickDeg[c]
			}
		}
		tot := pk[0] + pk[1] + pk[2]
		t.Logf("%-14s %7.4f %6d%% %+7.4f %5d%% %7.1f%% %7.1f%% %6.1f %6.1f %6.1f %6.1f %6.1f %6.1f %7.0f %5.1f", n, median(at), 100*ahead/len(res), median(mg), 100*aheadT/len(res),
			100*median(deg), 100*median(deg10), 100*pk[0]/tot, 100*pd[0]/max(pk[0], 1), 100*pk[1]/tot, 100*pd[1]/max(pk[1], 1), 100*pk[2]/tot, 100*pd[2]/max(pk[2], 1), median(sig), median(eff))
	}
	// the step at which each run first reaches random's best, and the per-step median gap
	for _, n := range names {
		var first []float64
		for _, s := range res {
			f := 121.0
			for st, x := range s.Runs[n].Score {
				if x > s.Env["random_best"] {
					f = float64(st)
					break
				}
			}
			first = append(first, f)
		}
		t.Logf("%-14s reaches random's best at step (median) %.0f", n, median(first))
	}
	var line strings.Builder
	for _, st := range []int{5, 10, 15, 20, 25, 30, 35, 40} {
		var g, gt, go_ []float64
		for _, s := range res {
			g = append(g, s.Runs["envsched"].Score[st]-s.Runs["random"].Score[st])
			if r, ok := s.Runs["truth-all"]; ok {
				gt = append(gt, r.Score[st]-s.Runs["envsched"].Score[st])
			}
			go_ = append(go_, s.Runs["oracle"].Score[st]-s.Runs["envsched"].Score[st])
		}
		if len(gt) == 0 {
			gt = []float64{math.NaN()}
		}
		fmt.Fprintf(&line, " @%d es−rnd %+.4f truth−es %+.4f oracle−es %+.4f;", st, median(g), median(gt), median(go_))
	}
	t.Log(line.String())
	// per environment: where envsched stands against truth-all at step 40, summed over seeds
	// in contribution to the (equal-weighted) score, against the picks it gave each
	if _, ok := res[0].Runs["truth-all"]; ok {
		type envRow struct{ gap, picks, tpicks, deg, tdeg, size float64 }
		var rows []envRow
		for _, s := range res {
			w := NewWorld(sc, s.Seed)
			es, tr := s.Runs["envsched"], s.Runs["truth-all"]
			for e := range es.EnvAt40 {
				rows = append(rows, envRow{gap: (tr.EnvAt40[e] - es.EnvAt40[e]) / float64(len(es.EnvAt40)), picks: es.EnvPicks[e], tpicks: tr.EnvPicks[e],
					deg: es.EnvDeg[e], tdeg: tr.EnvDeg[e], size: float64(len(w.EnvTasks[e]))})
			}
		}
		// by size quartile of environment
		sort.Slice(rows, func(i, j int) bool { return rows[i].size < rows[j].size })
		q := len(rows) / 4
		for k := range 4 {
			var gap, p, tp, d, td, sz float64
			part := rows[k*q : min(len(rows), (k+1)*q)]
			if k == 3 {
				part = rows[k*q:]
			}
			for _, r := range part {
				gap += r.gap
				p += r.picks
				tp += r.tpicks
				d += r.deg
				td += r.tdeg
				sz += r.size
			}
			nn := float64(len(part))
			t.Logf("env size quartile %d (mean %4.0f tasks): truth − envsched at 40, summed contribution per seed %+.4f; picks 1-40 per env %.0f vs %.0f; degenerate %.0f%% vs %.0f%%",
				k+1, sz/nn, gap/float64(len(res)), p/nn, tp/nn, 100*d/max(p, 1), 100*td/max(tp, 1))
		}
	}
}

// h16One runs one policy on w for cfg.Steps steps. pol names the random stream (View.Rand);
// for envsched, mode hands the batcher the truth of some tasks and salt moves the seed of
// its random slots.
func h16One(t *testing.T, cfg Config, w *World, kind, pol, mode string, salt uint64) *h16Run {
	p, err := NewPolicy(kind, w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	es, _ := p.(*envschedPolicy)
	if es != nil {
		es.seed ^= salt * 0x9e3779b97f4a7c15
	}
	l := NewLearner(w)
	r := &h16Run{Score: []float64{l.Eval()}, TaskScore: []float64{l.EvalTasks()}, EnvPicks: make([]float64, len(w.Envs)), EnvDeg: make([]float64, len(w.Envs))}
	cum := make([]float64, len(w.Init))
	var deg, degE, groups, groupsE float64
	for step := 1; step <= cfg.Steps; step++ {
		v := &View{Step: step, Size: cfg.BatchSize, Group: cfg.GroupSize, World: w, Rand: stepRand(w.Seed, pol, step), truth: l.P}
		var chosen []int
		var ch []int
		if es != nil {
			before := make(map[int]bool)
			for i := range es.tasks {
				if es.tasks[i].Rollouts > 0 {
					before[es.task[i]] = true
				}
			}
			if mode == "" {
				chosen, err = es.Choose(v)
			} else {
				chosen, err = h16Choose(es, v, mode, l)
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, ti := range chosen {
				c := 0
				switch {
				case es.state.Baseline[es.node[ti]].Random:
					c = 2
				case before[ti]:
					c = 1
				}
				ch = append(ch, c)
			}
		} else {
			chosen, err = p.Choose(v)
			if err != nil {
				t.Fatal(err)
			}
			ch = make([]int, len(chosen))
		}
		rolled, trained := rollOut(l, p, chosen, step, cfg)
		p.Observe(step, rolled)
		for i, g := range rolled {
			d := 0.0
			if g.Degenerate() {
				d = 1
			}
			if step <= 40 {
				deg += d
				groups++
				if i < len(ch) {
					r.Picks[ch[i]]++
					r.PickDeg[ch[i]] += d
				}
				e := w.Tasks[g.Task].Env
				r.EnvPicks[e]++
				r.EnvDeg[e] += d
			}
			if step <= 10 {
				degE += d
				groupsE++
			}
		}
		if step <= 40 {
			for _, g := range trained {
				needs := w.Tasks[g.Task].Needs
				for _, s := range needs {
					cum[s] += 2 * g.Spread() / float64(len(needs))
				}
			}
		}
		l.Update(step, trained)
		r.Score, r.TaskScore = append(r.Score, l.Eval()), append(r.TaskScore, l.EvalTasks())
		if step == 40 {
			for _, held := range w.EnvHeld {
				s := 0.0
				for _, h := range held {
					s += l.HeldOutP(h)
				}
				r.EnvAt40 = append(r.EnvAt40, s/float64(len(held)))
			}
		}
	}
	r.Deg, r.DegEarly = deg/groups, degE/groupsE
	sum, sq := 0.0, 0.0
	for _, c := range cum {
		sum += c
		sq += c * c
	}
	r.Signal, r.Eff = sum, sum*sum/sq
	return r
}

// h16Choose is envschedPolicy.Choose with the truth handed to the batcher for the tasks mode
// names: "all", "tried" (rolled out before), "untried", "early" (every task, steps 1-10),
// "late" (every task, after step 10), "textbound" (the tasks never tried, less the part of
// their difficulty that no text tells), "knowable" (textbound for the tasks never tried, the
// truth for the others: the most that the text and the rollouts could ever tell).
func h16Choose(p *envschedPolicy, v *View, mode string, l *Learner) ([]int, error) {
	step := int64(v.Step)
	preds, err := p.predict(step)
	if err != nil {
		return nil, err
	}
	for i := range preds {
		tried := p.tasks[i].Rollouts > 0
		use := mode == "all" || mode == "tried" && tried || mode == "untried" && !tried ||
			mode == "early" && step <= 10 || mode == "late" && step > 10 || mode == "textbound" && !tried ||
			mode == "knowable"
		if !use {
			continue
		}
		q := v.Truth(p.task[i])
		if mode == "textbound" || mode == "knowable" && !tried {
			// the truth less the part of the difficulty no text tells: the most a model of
			// the catalogue could know of a task never tried
			w := v.World
			tk := w.Tasks[p.task[i]]
			tk.Difficulty -= tk.hidden
			q = l.prob(&tk, l.memory[w.root(p.task[i])])
		}
		a, b := truthCount*q, truthCount*(1-q)
		preds[i] = propagate.Prediction{Alpha: a, Beta: b, Mean: q, Var: propagate.BetaVariance(a, b),
			SD: math.Sqrt(q * (1 - q) / (truthCount + 1)), Own: preds[i].Own, Borrowed: preds[i].Borrowed}
		preds[i].PDeg = preds[i].PDegenerate(v.Group)
	}
	req := batcher.Request{Size: v.Size, GroupSize: v.Group, Step: step, Seed: mix(p.seed ^ uint64(step)<<20)}
	b, err := batcher.Select(p.g, preds, p.tasks, req, p.selectParams())
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(b.Picks))
	for _, pk := range b.Picks {
		p.state.Baseline[pk.Node].Random, p.state.Baseline[pk.Node].Cover = pk.Random, pk.ForCoverage()
		p.state.Baseline[pk.Node].Start = p.state.AtStart() && p.tasks[pk.Node].Rollouts == 0
		p.tasks[pk.Node].Chosen++
		p.tasks[pk.Node].LastChosen = step
		out = append(out, p.task[pk.Node])
	}
	return out, nil
}

func maxOf(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = max(m, v)
	}
	return m
}

func sd(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	m := mean(x)
	s := 0.0
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return math.Sqrt(s / float64(len(x)-1))
}
