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

// TestNeverTriedOffsetAcrossARestart (propagate's NewShift, on by default): the never-tried
// offset is measured from the stored answers and rollouts alone, so a scheduler restarted
// twice on the database answers byte for byte what one that kept running does, and stores
// the same state; the offset is stored, and only the answers of selection's picks of tasks
// never tried differ from those of a scheduler with it off: every pick, and every other
// task's answer, is the same.
func TestNeverTriedOffsetAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	dbA, dbB, dbC := openFile(t, filepath.Join(dir, "a.db")), openFile(t, filepath.Join(dir, "b.db")), openFile(t, filepath.Join(dir, "c.db"))
	defer func() { dbA.Close(); dbC.Close() }()
	for _, db := range []*storage.DB{dbA, dbB, dbC} {
		fill(t, db, 3, 60)
	}
	on := propagate.DefaultParams()
	off := on
	off.NewShift = false
	oOn := Options{Predict: &on}
	sA, sB, sC := newScheduler(t, dbA, oOn), newScheduler(t, dbB, oOn), newScheduler(t, dbC, Options{Predict: &off})
	body := []byte(`{"size": 32}`)
	tried := map[string]bool{} // fill rolled out the first half of the catalogue
	for i := range 90 {
		tried[fmt.Sprintf("env-%d/task-%03d", i/60, i%60)] = true
	}
	differ, untried := 0, 0
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
			t.Fatalf("%s: %d tasks with the offset, %d without", id, len(a.Tasks), len(b.Tasks))
		}
		for k := range a.Tasks {
			x, y := a.Tasks[k], b.Tasks[k]
			if x.Env != y.Env || x.TaskID != y.TaskID || x.Score != y.Score || x.Reason != y.Reason {
				t.Fatalf("%s rank %d: %s/%s (%s) with the offset, %s/%s (%s) without: the picks differ", id, k+1, x.Env, x.TaskID, x.Reason, y.Env, y.TaskID, y.Reason)
			}
			key := x.Env + "/" + x.TaskID
			if !tried[key] && x.Reason != "random slot" && x.Reason != "" {
				untried++
				if x.PDegenerate != y.PDegenerate || x.PredictedMean != y.PredictedMean {
					differ++
				}
			} else if x.PDegenerate != y.PDegenerate || x.PredictedMean != y.PredictedMean || x.PredictedVariance != y.PredictedVariance {
				t.Errorf("%s rank %d (%s): p_degenerate %v with the offset, %v without", id, k+1, x.Reason, x.PDegenerate, y.PDegenerate)
			}
		}
		rollStuckBinary(t, a, dbA, dbB)
		rollStuckBinary(t, b, dbC)
		for _, x := range a.Tasks {
			tried[x.Env+"/"+x.TaskID] = true
		}
		if sa, sb := must(dbA.PredictorState()), must(dbB.PredictorState()); !bytes.Equal(sa, sb) {
			t.Fatalf("%s: the stored states differ after a restart", id)
		}
	}
	defer func() { dbB.Close() }()
	st := storedState(t, dbA)
	if st.Dispersion == nil || st.Dispersion.NewOffset == 0 {
		t.Fatalf("dispersion %+v: no never-tried offset stored", st.Dispersion)
	}
	if stC := storedState(t, dbC); stC.Dispersion != nil && stC.Dispersion.NewOffset != 0 {
		t.Errorf("option off: offset %v stored", stC.Dispersion.NewOffset)
	}
	if differ == 0 {
		t.Errorf("no untried pick's answer differs from the option off (%d such picks): the offset changed nothing", untried)
	}
	t.Logf("offset %.4f; %d of %d picks of tasks never tried answered differently from the option off", st.Dispersion.NewOffset, differ, untried)
	storagetest.MustCheck(t, dbA, "")
	storagetest.MustCheck(t, dbB, "")
}
