package schedule

import (
	"hash/fnv"
	"testing"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
)

// rollGraded stores groups of 4 for each task of an answer: in env-00 and env-01 graded
// rewards (0, 0.5 or 1; a third of the tasks always 0.5, the rest mixed by a hash of task,
// step and rollout), in the other environments 0/1 rewards by the same hash.
func rollGraded(t *testing.T, a Answer, dbs ...*storage.DB) {
	t.Helper()
	for _, db := range dbs {
		var b storage.Batch
		for _, task := range a.Tasks {
			graded := task.Env == "env-00" || task.Env == "env-01"
			for j := range 4 {
				u := fnvOf(string([]byte{byte(j), byte(a.Step)})+task.Env+"/"+task.TaskID) % 3
				r := float64(u % 2)
				if graded {
					r = float64(u) / 2
					if fnvOf(task.TaskID)%3 == 0 {
						r = 0.5
					}
				}
				b.Rollouts = append(b.Rollouts, storage.Rollout{Rollout: record.Rollout{Env: task.Env, Task: task.TaskID,
					Reward: r, Step: a.Step, HasStep: true}})
			}
		}
		if _, err := db.Commit(&b); err != nil {
			t.Fatal(err)
		}
	}
}

func fnvOf(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// TestGradedAnswersAcrossARestart: the value of graded tasks (batcher.ExploitMatched, read
// from p_degenerate, which the environments' and tasks' stored groups give) is a function of
// the database, so a scheduler restarted on it answers byte for byte what one that kept
// running does, while graded and 0/1 environments are both chosen from.
func TestGradedAnswersAcrossARestart(t *testing.T) {
	catalogue := func(t *testing.T, db *storage.DB) { envCatalogue(t, db, 4, func(int) int { return 30 }) }
	picks := picksAcrossRestarts(t, catalogue, Options{}, []byte(`{"size": 12, "group_size": 4}`), 10, []int{4, 7}, rollGraded)
	if picks["env-00"]+picks["env-01"] == 0 || picks["env-02"]+picks["env-03"] == 0 {
		t.Errorf("picks per environment %v: want graded and 0/1 environments chosen", picks)
	}
}
