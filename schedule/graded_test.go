package schedule

import (
	"fmt"
	"hash/fnv"
	"path/filepath"
	"testing"

	"github.com/envsched/envsched/propagate"
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

// TestGradedCalibrationAcrossARestart (propagate.Params.GradedCal): the graded calibration's
// maps and the graded chances of the picks they measure are stored with every answer, so a
// scheduler restarted on the database answers byte for byte what one that kept running does,
// once the maps have measured (the stored state shows them and baselines that carry the
// chance), and with selection reading the calibrated chance too.
func TestGradedCalibrationAcrossARestart(t *testing.T) {
	for _, sel := range []bool{false, true} {
		p := propagate.DefaultParams()
		p.GradedCalSelect = sel
		dir := t.TempDir()
		dbA, dbB := openFile(t, filepath.Join(dir, "a.db")), openFile(t, filepath.Join(dir, "b.db"))
		for _, db := range []*storage.DB{dbA, dbB} {
			envCatalogue(t, db, 4, func(int) int { return 30 })
		}
		o := Options{Predict: &p}
		sA, sB := newScheduler(t, dbA, o), newScheduler(t, dbB, o)
		body := []byte(`{"size": 12, "group_size": 4}`)
		for i := 1; i <= 10; i++ {
			if i == 4 || i == 7 {
				if err := dbB.Close(); err != nil {
					t.Fatal(err)
				}
				dbB = openFile(t, filepath.Join(dir, "b.db"))
				sB = newScheduler(t, dbB, o)
			}
			a := decode(t, answerBoth(t, sA, sB, fmt.Sprintf("r%02d", i), body))
			rollGraded(t, a, dbA, dbB)
		}
		state, err := dbB.PredictorState()
		if err != nil {
			t.Fatal(err)
		}
		c := Corrections(state)
		if c.GradedMaps["rechosen"] == nil || c.GradedMaps["never_tried"] == nil {
			t.Errorf("select %v: graded maps %v: want the re-chosen and never-tried maps measured", sel, c.GradedMaps)
		}
		saved, err := decodeSaved(state)
		if err != nil {
			t.Fatal(err)
		}
		graded := 0
		for _, e := range saved.Baseline {
			if e.Graded > 0 {
				graded++
				if e.Env != "env-00" && e.Env != "env-01" {
					t.Errorf("a task of 0/1 rewards stored a graded chance: %+v", e)
				}
			}
		}
		if graded == 0 {
			t.Errorf("select %v: no baseline carries a graded chance", sel)
		}
		dbA.Close()
		dbB.Close()
	}
}
