// Package reporttest fills a database with a small generated training run, for tests of the
// commands that read one (report, export): a catalogue, one stored answer per step choosing
// tasks whose success grows as they are trained on, groups of rollouts answering each batch,
// and a few quarantined lines.
package reporttest

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/envsched/envsched/batcher"
	"github.com/envsched/envsched/ledger"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
)

// Options shape the generated run. The zero value takes the defaults noted.
type Options struct {
	Envs      int    // environments; default 3
	Tasks     int    // tasks per environment; default 20
	Steps     int    // steps, one answer each; default 12
	BatchSize int    // tasks per answer; default 8
	GroupSize int    // rollouts per chosen task; default 4
	Seed      uint64 // the run's seed
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.Envs, 3)
	def(&o.Tasks, 20)
	def(&o.Steps, 12)
	def(&o.BatchSize, 8)
	def(&o.GroupSize, 4)
	return o
}

// Run is what Generate stored.
type Run struct {
	Envs        []string
	Tasks       int // tasks in the catalogue
	Rollouts    int // rollouts stored
	Answers     int // answers stored
	Quarantined int // quarantine entries stored
}

// Generate stores a generated run in db.
func Generate(db *storage.DB, opts Options) (Run, error) {
	opts = opts.withDefaults()
	rng := rand.New(rand.NewPCG(opts.Seed, 7))
	g := &gen{opts: opts, rng: rng, skill: map[storage.TaskKey]float64{}}
	if err := g.catalogue(db); err != nil {
		return g.run, err
	}
	for step := 1; step <= opts.Steps; step++ {
		if err := g.step(db, int64(step)); err != nil {
			return g.run, err
		}
	}
	return g.run, nil
}

type gen struct {
	opts  Options
	rng   *rand.Rand
	keys  []storage.TaskKey
	skill map[storage.TaskKey]float64 // true success probability
	run   Run
}

func (g *gen) catalogue(db *storage.DB) error {
	b := &storage.Batch{Files: []storage.FileState{{ID: 1, Kind: storage.KindCatalog, Path: "catalog/tasks.jsonl"}}}
	for e := range g.opts.Envs {
		env := fmt.Sprintf("env-%c", 'a'+e)
		g.run.Envs = append(g.run.Envs, env)
		for t := range g.opts.Tasks {
			k := storage.TaskKey{Env: env, Task: fmt.Sprint(t)}
			g.keys = append(g.keys, k)
			g.skill[k] = math.Pow(g.rng.Float64(), 1+float64(e))
			b.Tasks = append(b.Tasks, record.Task{Env: env, Task: k.Task, Text: fmt.Sprintf("solve puzzle %d of %s", t, env),
				Tools: []string{"search", "python"}, Tags: []string{fmt.Sprintf("level-%d", t%3)}})
		}
	}
	g.run.Tasks = len(b.Tasks)
	_, err := db.Commit(b)
	return err
}

// step stores the answer of one step and then its rollouts, as a trainer would produce them.
func (g *gen) step(db *storage.DB, step int64) error {
	id := fmt.Sprintf("step-%06d", step)
	chosen := g.choose()
	answer, preds, err := g.answer(id, step, chosen)
	if err != nil {
		return err
	}
	rec := storage.AnswerRecord{ID: id, Step: step, Answer: answer, Chosen: chosen, GroupSize: g.opts.GroupSize,
		Predictions: preds}
	if err := db.StoreAnswerRecord(rec); err != nil {
		return err
	}
	g.run.Answers++
	return g.rollouts(db, id, step, chosen)
}

func (g *gen) choose() []storage.TaskKey {
	perm := g.rng.Perm(len(g.keys))
	out := make([]storage.TaskKey, 0, g.opts.BatchSize)
	for _, i := range perm[:min(g.opts.BatchSize, len(perm))] {
		out = append(out, g.keys[i])
	}
	return out
}

// answer is a PROTOCOL.md answer whose predictions are the true chances blurred a little, with
// those predictions for the calibration ledger; the first task of every answer is a random slot.
func (g *gen) answer(id string, step int64, chosen []storage.TaskKey) ([]byte, []ledger.Prediction, error) {
	envs := map[string]int{}
	tasks := make([]map[string]any, len(chosen))
	preds := make([]ledger.Prediction, len(chosen))
	for i, k := range chosen {
		envs[k.Env]++
		p := min(0.99, max(0.01, g.skill[k]+0.1*(g.rng.Float64()-0.5)))
		gs := float64(g.opts.GroupSize)
		reason := "generated"
		if i == 0 {
			reason = batcher.ReasonRandom
		}
		pdeg := math.Pow(p, gs) + math.Pow(1-p, gs)
		tasks[i] = map[string]any{"env": k.Env, "task_id": k.Task, "rank": i + 1, "score": p * (1 - p),
			"predicted_mean": p, "predicted_variance": p * (1 - p), "p_degenerate": pdeg,
			"exploit": p * (1 - p), "coverage": 0.0, "penalty": 0.0, "reason": reason}
		preds[i] = ledger.Prediction{Env: k.Env, Task: k.Task, Rank: i + 1, PDegenerate: pdeg, Mean: p, Random: i == 0}
	}
	data, err := json.Marshal(map[string]any{"id": id, "policy": "reporttest", "step": step,
		"created_at": time.Date(2026, 12, 2, 17, 0, int(step), 0, time.UTC).Format(time.RFC3339),
		"size":       len(chosen), "group_size": g.opts.GroupSize, "rollouts_seen": g.run.Rollouts,
		"envs": envs, "tasks": tasks})
	return data, preds, err
}

// rollouts stores one group per chosen task, then trains: success grows with the group's spread.
func (g *gen) rollouts(db *storage.DB, id string, step int64, chosen []storage.TaskKey) error {
	b := &storage.Batch{Files: []storage.FileState{{ID: 2, Kind: storage.KindRollouts, Path: "rollouts/run.jsonl"}}}
	for i, k := range chosen {
		wins := 0
		for j := range g.opts.GroupSize {
			r := 0.0
			if g.rng.Float64() < g.skill[k] {
				r, wins = 1, wins+1
			}
			b.Rollouts = append(b.Rollouts, storage.Rollout{File: 2, Rollout: record.Rollout{Env: k.Env, Task: k.Task,
				Reward: r, Step: step, HasStep: true, Group: fmt.Sprintf("%s-%d", id, i), RequestID: id,
				RolloutID: fmt.Sprintf("%s-%d-%d", id, i, j)}})
		}
		if wins > 0 && wins < g.opts.GroupSize {
			g.skill[k] = min(1, g.skill[k]+0.1)
		}
	}
	b.Quarantine = []storage.QuarantineEntry{{File: 2, Path: "rollouts/run.jsonl", Offset: step * 100,
		Reason: "missing reward", Head: []byte(`{"env": "env-a", "task_id": "1"}`)}}
	res, err := db.Commit(b)
	g.run.Rollouts += res.Rollouts
	g.run.Quarantined += res.Quarantined
	return err
}
