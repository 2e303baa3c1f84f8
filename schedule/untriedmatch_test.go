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

// TestNeverTriedFactorAcrossARestart (propagate's NewMatch and LowMatch, on by default): the
// never-tried factor, the low-value re-chosen factor and the groups waiting to measure them
// are measured from the stored answers and rollouts alone, so a scheduler restarted twice on
// the database answers byte for byte what one that kept running does, and stores the same
// state; the factors are stored, and the answers (what they say of the picks) differ from
// those of a scheduler with both off.
func TestNeverTriedFactorAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	dbA, dbB, dbC := openFile(t, filepath.Join(dir, "a.db")), openFile(t, filepath.Join(dir, "b.db")), openFile(t, filepath.Join(dir, "c.db"))
	defer func() { dbA.Close(); dbC.Close() }()
	for _, db := range []*storage.DB{dbA, dbB, dbC} {
		fill(t, db, 3, 40)
	}
	on := propagate.DefaultParams()
	off := on
	off.NewMatch, off.LowMatch = false, false
	oOn := Options{Predict: &on}
	sA, sB, sC := newScheduler(t, dbA, oOn), newScheduler(t, dbB, oOn), newScheduler(t, dbC, Options{Predict: &off})
	body := []byte(`{"size": 12}`)
	differ, pending := 0, 0
	for i := 1; i <= 9; i++ {
		if i == 4 || i == 7 {
			if err := dbB.Close(); err != nil {
				t.Fatal(err)
			}
			dbB = openFile(t, filepath.Join(dir, "b.db"))
			sB = newScheduler(t, dbB, oOn)
		}
		id := fmt.Sprintf("r%02d", i)
		raw := answerBoth(t, sA, sB, id, body)
		c := must(sC.Answer(id, body))
		if !bytes.Equal(c, raw) {
			differ++
		}
		rollStuckBinary(t, decode(t, raw), dbA, dbB)
		rollStuckBinary(t, decode(t, c), dbC)
		if sa, sb := must(dbA.PredictorState()), must(dbB.PredictorState()); !bytes.Equal(sa, sb) {
			t.Fatalf("%s: the stored states differ after a restart", id)
		}
		if st := storedState(t, dbA); st.Dispersion != nil && len(st.Dispersion.NewPending)+len(st.Dispersion.LowPending) > 0 {
			pending++
		}
	}
	defer func() { dbB.Close() }()
	st := storedState(t, dbA)
	if st.Dispersion == nil || st.Dispersion.NewFactor == 0 || st.Dispersion.LowFactor == 0 && len(st.Dispersion.LowPending) == 0 {
		t.Fatalf("dispersion %+v: no never-tried factor, or nothing of the low-value re-chosen factor, stored", st.Dispersion)
	}
	if stC := storedState(t, dbC); stC.Dispersion != nil && (stC.Dispersion.NewFactor != 0 || len(stC.Dispersion.NewPending) > 0 || stC.Dispersion.LowFactor != 0) {
		t.Errorf("option off: factor %v, %d groups pending stored", stC.Dispersion.NewFactor, len(stC.Dispersion.NewPending))
	}
	if differ == 0 {
		t.Error("every answer the same with the option off: the factor changed nothing")
	}
	t.Logf("factor %.4f, low %.4f (%d pending); %d of 9 stored states held pending groups; %d answers differ from the option off", st.Dispersion.NewFactor, st.Dispersion.LowFactor, len(st.Dispersion.LowPending), pending, differ)
	storagetest.MustCheck(t, dbA, "")
	storagetest.MustCheck(t, dbB, "")
}
