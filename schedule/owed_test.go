package schedule

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/envsched/envsched/batcher"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// owedCatalogue is 41 environments shaped like a real benchmark's: six of four tasks, twenty of
// forty and fifteen of 120. At size 40 the minimum (half the uniform share) is 0.49 of a slot,
// rounded to nothing in every batch, and the shares of the six tiny ones are 0.06 of a slot.
func owedCatalogue(t *testing.T, db *storage.DB) {
	t.Helper()
	var b storage.Batch
	for e := range 41 {
		n := 4
		switch {
		case e >= 26:
			n = 120
		case e >= 6:
			n = 40
		}
		for k := range n {
			b.Tasks = append(b.Tasks, record.Task{Env: fmt.Sprintf("env-%02d", e), Task: fmt.Sprintf("task-%03d", k), Text: "solve it"})
		}
	}
	if _, err := db.Commit(&b); err != nil {
		t.Fatal(err)
	}
}

// TestOwedSlotsAcrossARestart (RandomOwed on): the random slots owed to the environments the
// quotas leave out follow from the stored answers alone, so a scheduler restarted on the
// database answers byte for byte what one that kept running does; and within 16 batches every
// environment has been chosen (2 random slots a batch; the quotas alone never give the tiny
// ones a slot).
func TestOwedSlotsAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	dbA, dbB := openFile(t, filepath.Join(dir, "a.db")), openFile(t, filepath.Join(dir, "b.db"))
	defer func() { dbA.Close() }()
	owedCatalogue(t, dbA)
	owedCatalogue(t, dbB)
	p := batcher.DefaultParams()
	p.RandomOwed = true
	o := Options{Select: &p}
	sA, sB := newScheduler(t, dbA, o), newScheduler(t, dbB, o)
	body := []byte(`{"size": 40}`)
	const steps = 16
	picks := map[string]int{}
	for i := 1; i <= steps; i++ {
		if i == 6 || i == 11 {
			if err := dbB.Close(); err != nil {
				t.Fatal(err)
			}
			dbB = openFile(t, filepath.Join(dir, "b.db"))
			sB = newScheduler(t, dbB, o)
		}
		a := decode(t, answerBoth(t, sA, sB, fmt.Sprintf("r%02d", i), body))
		for _, task := range a.Tasks {
			picks[task.Env]++
		}
		rollHalf(t, a, dbA, dbB)
	}
	defer func() { dbB.Close() }()
	for e := range 41 {
		if env := fmt.Sprintf("env-%02d", e); picks[env] == 0 {
			t.Errorf("%s: never chosen in %d batches of 40", env, steps)
		}
	}
	storagetest.MustCheck(t, dbA, "")
	storagetest.MustCheck(t, dbB, "")
}

// rollHalf stores a group of 8 for every task of a, half its rewards 1: every task stays as
// informative as a task can be, so the big environments' value keeps their quotas.
func rollHalf(t *testing.T, a Answer, dbs ...*storage.DB) {
	t.Helper()
	for _, db := range dbs {
		var b storage.Batch
		for _, task := range a.Tasks {
			for k := range 8 {
				b.Rollouts = append(b.Rollouts, storage.Rollout{Rollout: record.Rollout{Env: task.Env, Task: task.TaskID,
					Reward: float64(k % 2), Step: a.Step, HasStep: true}})
			}
		}
		if _, err := db.Commit(&b); err != nil {
			t.Fatal(err)
		}
	}
}
