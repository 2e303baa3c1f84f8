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

// rollGroupsOf commits a group of g rollouts at the answer's step for each chosen task, 0/1
// rewards drawn with a chance fixed per task (from its name), so that tasks chosen again
// have an own mean strictly between 0 and 1 and the re-chosen trend measures them.
func rollGroupsOf(t *testing.T, a Answer, g int, dbs ...*storage.DB) {
	t.Helper()
	for _, db := range dbs {
		var b storage.Batch
		for _, task := range a.Tasks {
			h := fnv.New64a()
			fmt.Fprintf(h, "%s/%s", task.Env, task.TaskID)
			seed := h.Sum64()
			p := float64(seed%7+1) / 9
			for k := range g {
				r := 0.0
				if float64((seed>>(8+3*uint(k+int(a.Step))%40))%1000)/1000 < p {
					r = 1
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

// TestPredictionsTakeTheRequestsGroupSize: the re-chosen trend's feature log2(rollouts / G)
// and its fit use the group size the trainer asks for, not the scheduler's configured one.
// A scheduler configured with the default group size (8) that answers requests of
// group_size 4 must store the same state and give the same answers as one configured for 4;
// it did not when the predictor's group size was fixed at its configuration. A restarted
// scheduler (configured with the default) answers the next request as the one that kept
// running.
func TestPredictionsTakeTheRequestsGroupSize(t *testing.T) {
	dir := t.TempDir()
	dbA, dbB := openFile(t, filepath.Join(dir, "a.db")), openFile(t, filepath.Join(dir, "b.db"))
	defer dbA.Close()
	fill(t, dbA, 2, 30)
	fill(t, dbB, 2, 30)
	four := propagate.DefaultParams()
	four.Decay, four.GroupSize = dbB.Config().Decay, 4
	sA, sB := newScheduler(t, dbA, Options{}), newScheduler(t, dbB, Options{Predict: &four})
	body := []byte(`{"size": 20, "group_size": 4}`)
	for i := 1; i <= 6; i++ {
		a := answerBoth(t, sA, sB, fmt.Sprintf("r%d", i), body)
		rollGroupsOf(t, decode(t, a), 4, dbA, dbB)
	}
	tr := storedState(t, dbA).Dispersion.Trend
	if tr == nil || tr.N == 0 || tr.Beta[2] == 0 {
		t.Fatalf("re-chosen trend %+v: want it measured with a weight on log2(rollouts/G), else the group size does not show", tr)
	}
	if trB := storedState(t, dbB).Dispersion.Trend; *trB != *tr {
		t.Fatalf("trend stored by the scheduler configured for 8: %+v; for 4: %+v", *tr, *trB)
	}
	if err := dbB.Close(); err != nil {
		t.Fatal(err)
	}
	dbB = openFile(t, filepath.Join(dir, "b.db"))
	defer dbB.Close()
	sB = newScheduler(t, dbB, Options{})
	answerBoth(t, sA, sB, "r7", body)
}

// TestGroupSizeEightIsTheRequests is the sibling the other way: a scheduler configured for
// group size 4 that answers requests of group_size 8 answers and stores as the default one.
func TestGroupSizeEightIsTheRequests(t *testing.T) {
	dir := t.TempDir()
	dbA, dbB := openFile(t, filepath.Join(dir, "a.db")), openFile(t, filepath.Join(dir, "b.db"))
	defer dbA.Close()
	defer dbB.Close()
	fill(t, dbA, 2, 30)
	fill(t, dbB, 2, 30)
	four := propagate.DefaultParams()
	four.Decay, four.GroupSize = dbB.Config().Decay, 4
	sA, sB := newScheduler(t, dbA, Options{}), newScheduler(t, dbB, Options{Predict: &four})
	for i := 1; i <= 6; i++ {
		a := answerBoth(t, sA, sB, fmt.Sprintf("r%d", i), []byte(`{"size": 20, "group_size": 8}`))
		rollGroupsOf(t, decode(t, a), 8, dbA, dbB)
	}
	tA, tB := storedState(t, dbA).Dispersion.Trend, storedState(t, dbB).Dispersion.Trend
	if tA == nil || tA.N == 0 || tB == nil || *tA != *tB {
		t.Errorf("trends stored for group_size 8 by schedulers configured for 8 and 4: %+v and %+v; want measured and equal", tA, tB)
	}
}
