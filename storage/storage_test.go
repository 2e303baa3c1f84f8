package storage_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

func rollout(env, task string, reward float64, step int64, group, id string) storage.Rollout {
	return storage.Rollout{Rollout: record.Rollout{Env: env, Task: task, Reward: reward, Step: step,
		HasStep: step != 0, Group: group, RolloutID: id}, File: 1}
}

func TestCommitCountsAndStats(t *testing.T) {
	db := storagetest.Open(t)
	b := &storage.Batch{
		Files: []storage.FileState{{ID: 1, Kind: storage.KindRollouts, Path: "rollouts/a.jsonl", Offset: 100}},
		Tasks: []record.Task{{Env: "e", Task: "t1", Text: "hello", Tools: []string{"x"}}},
		Rollouts: []storage.Rollout{
			rollout("e", "t1", 1, 1, "", "r1"),
			rollout("e", "t1", 0, 1, "", "r2"),
			rollout("e", "t1", 2, 1, "", "r2"), // duplicate
			rollout("e", "t2", 1.5, 1, "g", "r3"),
			rollout("e", "t2", 1, 1, "g", "r4"),
		},
		Quarantine: []storage.QuarantineEntry{{File: 1, Path: "rollouts/a.jsonl", Offset: 7, Reason: "not a JSON object", Head: []byte("{")}},
	}
	res, err := db.Commit(b)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rollouts != 4 || res.Duplicates != 1 || res.Clipped != 1 || res.Quarantined != 1 || res.NewTasks != 2 {
		t.Fatalf("result %+v", res)
	}
	envs, err := db.Envs()
	if err != nil {
		t.Fatal(err)
	}
	e := envs["e"]
	if e.Tasks != 2 || e.TasksSeen != 2 || e.Rollouts != 4 || e.Groups != 2 || e.Degenerate != 1 {
		t.Fatalf("env %+v", e)
	}
	if _, err := db.Answer("x"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("answer of unknown id: %v", err)
	}
	if err := db.StoreAnswer("x", 5, []byte("{}"), []storage.TaskKey{{"e", "t1"}}); err != nil {
		t.Fatal(err)
	}
	c, _ := db.Counters()
	if c.Round != 5 || c.RequestsAnswered != 1 || c.Rollouts != 4 || c.Duplicates != 1 {
		t.Fatalf("counters %+v", c)
	}
}

func TestSecondOpenIsLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = storage.Open(path, storage.Options{Timeout: 50e6})
	if !errors.Is(err, storage.ErrLocked) {
		t.Fatalf("second open: %v", err)
	}
}
