package storage_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/envsched/envsched/storage"
)

// TestRolloutIDOfAnotherTaskIsCountedAsReused: a trainer whose rollout ids are unique only
// within a group ("STEP/i") had every task's rollouts but the first task's skipped as
// duplicates, with nothing but the duplicates counter to say so. They are still skipped (the
// id names a stored rollout), and counted in Result.Reused with the first of them, which the
// ingester logs; a replay of a task's own ids is a plain duplicate.
func TestRolloutIDOfAnotherTaskIsCountedAsReused(t *testing.T) {
	db := openAt(t, filepath.Join(t.TempDir(), "envsched.db"), storage.Options{})
	defer db.Close()
	b := &storage.Batch{}
	for task := range 3 {
		for i := range 4 {
			b.Rollouts = append(b.Rollouts, rollout("e", fmt.Sprintf("t%d", task), float64(i%2), 1, "", fmt.Sprintf("step-1/%d", i)))
		}
	}
	res := commit(t, db, b)
	if res.Rollouts != 4 || res.Duplicates != 8 || res.Reused != 8 {
		t.Fatalf("rollouts %d, duplicates %d, reused %d; want 4, 8, 8", res.Rollouts, res.Duplicates, res.Reused)
	}
	want := storage.ReusedID{RolloutID: "step-1/0", Task: storage.TaskKey{Env: "e", Task: "t1"}, Stored: storage.TaskKey{Env: "e", Task: "t0"}}
	if res.FirstReused != want {
		t.Errorf("first reused %+v, want %+v", res.FirstReused, want)
	}
	// a replay: the same task's ids again, in this commit's later lines and in a later commit
	replay := &storage.Batch{}
	for i := range 4 {
		replay.Rollouts = append(replay.Rollouts, rollout("e", "t0", 1, 1, "", fmt.Sprintf("step-1/%d", i)))
	}
	if res := commit(t, db, replay); res.Duplicates != 4 || res.Reused != 0 {
		t.Errorf("a replay of t0's ids: duplicates %d, reused %d; want 4, 0", res.Duplicates, res.Reused)
	}
	other := &storage.Batch{Rollouts: []storage.Rollout{rollout("f", "t0", 1, 1, "", "step-1/2")}}
	if res := commit(t, db, other); res.Reused != 1 || res.FirstReused.Stored != (storage.TaskKey{Env: "e", Task: "t0"}) {
		t.Errorf("the id of e/t0 in environment f: reused %d (%+v); want 1, stored e/t0", res.Reused, res.FirstReused)
	}
}
