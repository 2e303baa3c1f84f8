package schedule

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// TestBaselineAfterTheGraphMoved: a running scheduler finds the carried baseline entries'
// tasks by the nodes it kept, which new catalogue tasks (sorting before every old one) and
// tasks first seen in rollouts move; it must answer and store what a scheduler started on
// the same database does, which finds each by name.
func TestBaselineAfterTheGraphMoved(t *testing.T) {
	dir, dbA, dbB, sA, sB := twinSchedulers(t)
	body := []byte(`{"size": 20}`)
	for i := 1; i <= 3; i++ {
		rollChosen(t, decode(t, answerBoth(t, sA, sB, fmt.Sprintf("r%d", i), body)), dbA, dbB)
	}
	for _, db := range []*storage.DB{dbA, dbB} {
		var b storage.Batch
		for e := range 2 {
			for k := range 7 {
				b.Tasks = append(b.Tasks, record.Task{Env: fmt.Sprintf("env-%d", e), Task: fmt.Sprintf("a-new-%d", k), Text: "solve it"})
			}
			b.Rollouts = append(b.Rollouts, storage.Rollout{Rollout: record.Rollout{Env: fmt.Sprintf("env-%d", e),
				Task: "0-rollouts-only", Reward: 1, Step: 3, HasStep: true}})
		}
		if _, err := db.Commit(&b); err != nil {
			t.Fatal(err)
		}
	}
	if len(stateOf(sA).Baseline) <= 20 {
		t.Fatalf("%d baseline entries: want some carried from earlier answers, else nothing is looked up", len(stateOf(sA).Baseline))
	}
	if err := dbB.Close(); err != nil {
		t.Fatal(err)
	}
	dbB = openFile(t, filepath.Join(dir, "b.db"))
	defer dbB.Close()
	sB = newScheduler(t, dbB, Options{})
	for i := 4; i <= 5; i++ {
		id := fmt.Sprintf("r%d", i)
		a, b := must(sA.Answer(id, body)), must(sB.Answer(id, body))
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: the running scheduler answered\n%s\nthe restarted one\n%s", id, a, b)
		}
		sa, _ := dbA.PredictorState()
		sb, _ := dbB.PredictorState()
		if !bytes.Equal(sa, sb) {
			t.Fatalf("%s: stored states differ:\n%s\n%s", id, sa, sb)
		}
		rollChosen(t, decode(t, a), dbA, dbB)
	}
	storagetest.MustCheck(t, dbA, "")
	storagetest.MustCheck(t, dbB, "")
}
