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

// TestRandomFactorAcrossARestart (propagate's RandomMatch, on by default): the random-slot
// factor and its window of groups are measured from the stored answers and rollouts alone,
// so a scheduler restarted twice on the database answers byte for byte what one that kept
// running does, and stores the same state; the factor is stored, and only the random slots'
// answers differ from those of a scheduler with it off: every other task, and every pick,
// is the same.
func TestRandomFactorAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	dbA, dbB, dbC := openFile(t, filepath.Join(dir, "a.db")), openFile(t, filepath.Join(dir, "b.db")), openFile(t, filepath.Join(dir, "c.db"))
	defer func() { dbA.Close(); dbC.Close() }()
	for _, db := range []*storage.DB{dbA, dbB, dbC} {
		fill(t, db, 3, 60)
	}
	on := propagate.DefaultParams()
	off := on
	off.RandomMatch = false
	oOn := Options{Predict: &on}
	sA, sB, sC := newScheduler(t, dbA, oOn), newScheduler(t, dbB, oOn), newScheduler(t, dbC, Options{Predict: &off})
	body := []byte(`{"size": 32}`)
	differ, random := 0, 0
	for i := 1; i <= 10; i++ {
		if i == 4 || i == 8 {
			if err := dbB.Close(); err != nil {
				t.Fatal(err)
			}
			dbB = openFile(t, filepath.Join(dir, "b.db"))
			sB = newScheduler(t, dbB, oOn)
		}
		id := fmt.Sprintf("r%02d", i)
		raw := answerBoth(t, sA, sB, id, body)
		c := must(sC.Answer(id, body))
		a, b := decode(t, raw), decode(t, c)
		if len(a.Tasks) != len(b.Tasks) {
			t.Fatalf("%s: %d tasks with the factor, %d without", id, len(a.Tasks), len(b.Tasks))
		}
		for k := range a.Tasks {
			x, y := a.Tasks[k], b.Tasks[k]
			if x.Env != y.Env || x.TaskID != y.TaskID || x.Score != y.Score || x.Reason != y.Reason || x.PredictedMean != y.PredictedMean {
				t.Fatalf("%s rank %d: %s/%s (%s) with the factor, %s/%s (%s) without: the picks differ", id, k+1, x.Env, x.TaskID, x.Reason, y.Env, y.TaskID, y.Reason)
			}
			if x.Reason == "random slot" {
				random++
				if x.PDegenerate != y.PDegenerate {
					differ++
				}
			} else if x.PDegenerate != y.PDegenerate || x.PredictedVariance != y.PredictedVariance {
				t.Errorf("%s rank %d (%s): p_degenerate %v with the factor, %v without", id, k+1, x.Reason, x.PDegenerate, y.PDegenerate)
			}
		}
		rollStuckBinary(t, a, dbA, dbB)
		rollStuckBinary(t, b, dbC)
		if sa, sb := must(dbA.PredictorState()), must(dbB.PredictorState()); !bytes.Equal(sa, sb) {
			t.Fatalf("%s: the stored states differ after a restart", id)
		}
	}
	defer func() { dbB.Close() }()
	st := storedState(t, dbA)
	if st.Dispersion == nil || st.Dispersion.RandomFactor == 0 || len(st.Dispersion.RandomWindow) == 0 {
		t.Fatalf("dispersion %+v: no random-slot factor stored", st.Dispersion)
	}
	if stC := storedState(t, dbC); stC.Dispersion != nil && (stC.Dispersion.RandomFactor != 0 || len(stC.Dispersion.RandomWindow) > 0) {
		t.Errorf("option off: factor %v, %d groups stored", stC.Dispersion.RandomFactor, len(stC.Dispersion.RandomWindow))
	}
	if differ == 0 {
		t.Errorf("no random slot's answer differs from the option off (%d random slots): the factor changed nothing", random)
	}
	t.Logf("factor %.4f on %d groups; %d of %d random slots answered differently from the option off", st.Dispersion.RandomFactor, len(st.Dispersion.RandomWindow), differ, random)
	storagetest.MustCheck(t, dbA, "")
	storagetest.MustCheck(t, dbB, "")
}
