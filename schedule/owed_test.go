package schedule

import (
	"fmt"
	"testing"

	"github.com/envsched/envsched/batcher"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
)

// owedCatalogue is 41 environments shaped like a real benchmark's: six of four tasks, twenty of
// forty and fifteen of 120. At size 40 the minimum (half the uniform share) is 0.49 of a slot,
// rounded to nothing in every batch, and the shares of the six tiny ones are 0.06 of a slot.
func owedCatalogue(t *testing.T, db *storage.DB) {
	t.Helper()
	envCatalogue(t, db, 41, func(e int) int {
		switch {
		case e >= 26:
			return 120
		case e >= 6:
			return 40
		}
		return 4
	})
}

// TestOwedSlotsAcrossARestart (RandomOwed on): the random slots owed to the environments the
// quotas leave out follow from the stored answers alone, so a scheduler restarted on the
// database answers byte for byte what one that kept running does; and within 16 batches every
// environment has been chosen (2 random slots a batch; the quotas alone never give the tiny
// ones a slot).
func TestOwedSlotsAcrossARestart(t *testing.T) {
	p := batcher.DefaultParams()
	p.RandomOwed = true
	const steps = 16
	picks := picksAcrossRestarts(t, owedCatalogue, Options{Select: &p}, []byte(`{"size": 40}`), steps, []int{6, 11}, rollHalf)
	for e := range 41 {
		if env := fmt.Sprintf("env-%02d", e); picks[env] == 0 {
			t.Errorf("%s: never chosen in %d batches of 40", env, steps)
		}
	}
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
