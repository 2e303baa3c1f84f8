package schedule

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// trio is the scaffold of the tests that a correction measured from the stored answers and
// rollouts alone survives a restart: three databases filled alike (fill(t, db, 3, perEnv)), A
// answered by a scheduler that keeps running, B by one restarted before the steps in restarts,
// C by one with the correction off (off). Every step asks body of all three, checks that A's
// and B's answers and stored states are the same bytes, hands A's and C's answers (and A's database) to check,
// then rolls every pick out (rollStuckBinary). The databases are checked and closed at the end.
type trio struct {
	perEnv   int
	body     string
	steps    int
	restarts []int
	off      func(*propagate.Params)
}

// run runs t's steps and returns A's and C's databases (open until the test ends).
func (tr trio) run(t *testing.T, check func(id string, a, c []byte, dbA *storage.DB)) (dbA, dbC *storage.DB) {
	t.Helper()
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	dbA, dbB, dbC := openFile(t, path("a.db")), openFile(t, path("b.db")), openFile(t, path("c.db"))
	for _, db := range []*storage.DB{dbA, dbB, dbC} {
		fill(t, db, 3, tr.perEnv)
	}
	on := propagate.DefaultParams()
	off := on
	tr.off(&off)
	oOn := Options{Predict: &on}
	sA, sB, sC := newScheduler(t, dbA, oOn), newScheduler(t, dbB, oOn), newScheduler(t, dbC, Options{Predict: &off})
	for i := 1; i <= tr.steps; i++ {
		for _, r := range tr.restarts {
			if i != r {
				continue
			}
			if err := dbB.Close(); err != nil {
				t.Fatal(err)
			}
			dbB = openFile(t, path("b.db"))
			sB = newScheduler(t, dbB, oOn)
		}
		id := fmt.Sprintf("r%02d", i)
		raw := answerBoth(t, sA, sB, id, []byte(tr.body))
		c := must(sC.Answer(id, []byte(tr.body)))
		check(id, raw, c, dbA)
		rollStuckBinary(t, decode(t, raw), dbA, dbB)
		rollStuckBinary(t, decode(t, c), dbC)
		if sa, sb := must(dbA.PredictorState()), must(dbB.PredictorState()); !bytes.Equal(sa, sb) {
			t.Fatalf("%s: the stored states differ after a restart", id)
		}
	}
	storagetest.MustCheck(t, dbA, "")
	storagetest.MustCheck(t, dbB, "")
	t.Cleanup(func() { dbA.Close(); dbB.Close(); dbC.Close() })
	return dbA, dbC
}

// samePicks fails t unless a and c (answers with and without a correction) pick the same tasks
// with the same scores and reasons, and, when mean, the same predicted means.
func samePicks(t *testing.T, id string, a, c Answer, mean bool) {
	t.Helper()
	if len(a.Tasks) != len(c.Tasks) {
		t.Fatalf("%s: %d tasks with the correction, %d without", id, len(a.Tasks), len(c.Tasks))
	}
	for k := range a.Tasks {
		x, y := a.Tasks[k], c.Tasks[k]
		if x.Env != y.Env || x.TaskID != y.TaskID || x.Score != y.Score || x.Reason != y.Reason || mean && x.PredictedMean != y.PredictedMean {
			t.Fatalf("%s rank %d: %s/%s (%s) with the correction, %s/%s (%s) without: the picks differ", id, k+1, x.Env, x.TaskID, x.Reason, y.Env, y.TaskID, y.Reason)
		}
	}
}
