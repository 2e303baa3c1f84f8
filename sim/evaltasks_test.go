package sim

import (
	"math"
	"strings"
	"testing"
)

// TestEvalTasksWeighsBySize: the per-task score is every environment's held-out mean weighted
// by its catalogue size; it differs from the per-environment score when sizes differ and equals
// it when they are the same.
func TestEvalTasksWeighsBySize(t *testing.T) {
	w := NewWorld(DefaultScenario(), 7)
	l := NewLearner(w)
	envMean := func(e int) float64 {
		s := 0.0
		for _, h := range w.EnvHeld[e] {
			s += l.HeldOutP(h)
		}
		return s / float64(len(w.EnvHeld[e]))
	}
	num, den := 0.0, 0.0
	for e := range w.EnvHeld {
		n := float64(len(w.EnvTasks[e]) + len(w.EnvHeld[e]))
		num += n * envMean(e)
		den += n
	}
	if got, want := l.EvalTasks(), num/den; math.Abs(got-want) > 1e-12 {
		t.Fatalf("EvalTasks %v, want the size-weighted mean %v", got, want)
	}
	if math.Abs(l.EvalTasks()-l.Eval()) < 1e-6 {
		t.Fatalf("EvalTasks %v equals Eval %v on a world of unequal environments", l.EvalTasks(), l.Eval())
	}
	// One environment holding almost every task pulls the per-task score to its own mean.
	big := 0
	w.EnvTasks[big] = make([]int, 1_000_000)
	if got, want := l.EvalTasks(), envMean(big); math.Abs(got-want) > 1e-3 {
		t.Fatalf("EvalTasks %v with env %d holding nearly every task, want about its mean %v", got, big, want)
	}
	// Equal sizes: the two weightings agree.
	for e := range w.EnvTasks {
		w.EnvTasks[e] = w.EnvTasks[e][:0]
	}
	if got, want := l.EvalTasks(), l.Eval(); math.Abs(got-want) > 1e-12 {
		t.Fatalf("EvalTasks %v, Eval %v with equal sizes", got, want)
	}
}

// TestTaskSummaryUsesTaskScores: the per-task summary figures and headline come from
// Trace.TaskScore, and the per-environment ones still from Trace.Score, even when the two
// weightings disagree about who wins.
func TestTaskSummaryUsesTaskScores(t *testing.T) {
	mk := func(name string, env, task float64) Trace {
		tr := newTrace(name, 1, 40)
		for s := 1; s <= 40; s++ {
			tr.Score[s], tr.TaskScore[s] = env, task
			tr.Rollouts[s], tr.Groups[s] = int64(s)*512, int64(s)*64
		}
		return tr
	}
	cfg := shortConfig(40, "envsched", "random")
	traces := map[string][]Trace{
		"envsched": {mk("envsched", 0.6, 0.4), mk("envsched", 0.6, 0.4)},
		"random":   {mk("random", 0.5, 0.5), mk("random", 0.5, 0.5)},
	}
	cfg.Seeds = 2
	sum := Summarize(cfg, traces)
	es, _ := sum.find("envsched")
	if es.BeatsRandomBest != 1 || es.TaskBeatsRandomBest != 0 {
		t.Fatalf("beats random's best: per env %v (want 1), per task %v (want 0)", es.BeatsRandomBest, es.TaskBeatsRandomBest)
	}
	if es.TaskScoreAt[40].Median != 0.4 || es.TaskBest.Median != 0.4 || sum.RandomTaskBest.Median != 0.5 {
		t.Fatalf("per-task figures %v, %v, random %v; want 0.4, 0.4, 0.5", es.TaskScoreAt[40], es.TaskBest, sum.RandomTaskBest)
	}
	if es.ScoreAt[40].Median != 0.6 || sum.RandomBest.Median != 0.5 {
		t.Fatalf("per-environment figures changed: %v, random %v", es.ScoreAt[40], sum.RandomBest)
	}
	res := Result{Config: cfg, Traces: traces, Summary: sum}
	if got := taskHeadline(res); !strings.Contains(got, "0.400") || !strings.Contains(got, "0.500") || !strings.Contains(got, "0% of seeds") {
		t.Fatalf("per-task headline %q", got)
	}
	if got := headline(res); !strings.Contains(got, "0.600") || !strings.Contains(got, "100% of seeds") {
		t.Fatalf("headline %q", got)
	}
}
