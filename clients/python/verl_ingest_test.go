package python_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/envsched/envsched/ingest"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// verlLine is one line as verl's trainer.rollout_data_dir writes it (input, output, gts, score,
// step, then the reward extra info: here data_source and task_id from envsched_verl's reward
// wrapper, an acc key, and the V1 uid PROMPT_SESSION_INDEX).
func verlLine(env, task, uid string, session, index int, score float64, step int) []byte {
	line, _ := json.Marshal(map[string]any{
		"input":       "<|im_start|>user\nSolve problem " + task + "<|im_end|>",
		"output":      "The answer is 42.",
		"gts":         "42",
		"score":       score,
		"step":        step,
		"data_source": env,
		"task_id":     task,
		"acc":         score > 0.5,
		"uid":         fmt.Sprintf("%s_%d_%d", uid, session, index),
	})
	return append(line, '\n')
}

func TestVerlRolloutLinesIngestUnchanged(t *testing.T) {
	dir := t.TempDir()
	dump := filepath.Join(dir, "rollouts", "verl")
	os.MkdirAll(dump, 0o755)
	// Step 3: two prompts (uids) of gsm8k/17 with 4 samples each, one prompt of math/5.
	var data []byte
	groups := []struct {
		env, task, uid string
		scores         []float64
	}{
		{"gsm8k", "17", "7f3a9c", []float64{1, 0, 1, 1}},
		{"gsm8k", "17", "b21e04", []float64{0, 0, 0, 0}},
		{"math", "5", "c9d0aa", []float64{1, 1, 0, 0}},
	}
	for _, g := range groups {
		for i, s := range g.scores {
			data = append(data, verlLine(g.env, g.task, g.uid, 0, i, s, 3)...)
		}
	}
	os.WriteFile(filepath.Join(dump, "3.jsonl"), data, 0o644)

	db, err := storage.Open(filepath.Join(t.TempDir(), "envsched.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	defer storagetest.MustCheck(t, db, dir)
	in, err := ingest.New(db, dir, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Scan(context.Background()); err != nil {
		t.Fatal(err)
	}

	perGroup := map[string][]float64{}
	var c storage.Counters
	err = db.View(func(r *storage.Reader) error {
		if err := r.Rollouts(func(sr *storage.StoredRollout) error {
			if !sr.HasStep || sr.Step != 3 {
				return fmt.Errorf("rollout %s/%s lost its step: %+v", sr.Env, sr.Task, sr)
			}
			k := sr.Env + "/" + sr.Task + "/" + sr.Group
			perGroup[k] = append(perGroup[k], sr.Reward)
			return nil
		}); err != nil {
			return err
		}
		c, err = r.Counters()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Rollouts != 12 || c.Quarantined != 0 {
		t.Fatalf("counters %+v, want 12 rollouts and nothing quarantined", c)
	}
	var keys []string
	for k, v := range perGroup {
		sort.Float64s(v)
		keys = append(keys, fmt.Sprintf("%s=%v", k, v))
	}
	sort.Strings(keys)
	want := []string{"gsm8k/17/7f3a9c=[0 1 1 1]", "gsm8k/17/b21e04=[0 0 0 0]", "math/5/c9d0aa=[0 0 1 1]"}
	if fmt.Sprint(keys) != fmt.Sprint(want) {
		t.Errorf("groups recovered from the uids:\n got %v\nwant %v", keys, want)
	}
}
