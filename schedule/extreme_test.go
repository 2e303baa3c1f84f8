package schedule

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// rollExtremeBinary commits a group of 8 rollouts for each chosen task: tasks of an even
// number are nearly never solved (all 0 at even steps, one success at odd ones: pooled reward
// at most 1/16 once they have two groups), the others alternate 0 and 1.
func rollExtremeBinary(t *testing.T, a Answer, dbs ...*storage.DB) {
	t.Helper()
	for _, db := range dbs {
		var b storage.Batch
		for _, task := range a.Tasks {
			k, err := strconv.Atoi(strings.TrimPrefix(task.TaskID, "task-"))
			if err != nil {
				t.Fatal(err)
			}
			for j := range 8 {
				r := float64(j % 2)
				if k%2 == 0 {
					r = 0
					if j == 0 && a.Step%2 == 1 {
						r = 1
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

// TestExtremeAcrossARestart (--dispersion-extreme): the extreme map is measured from the
// stored answers and rollouts alone, so a scheduler restarted twice on the database answers
// byte for byte what one that kept running does, and stores the same state; the map is stored
// (the dispersion's version 9) and the answers come to differ from those of a scheduler with
// the option off.
func TestExtremeAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	dbA, dbB, dbC := openFile(t, filepath.Join(dir, "a.db")), openFile(t, filepath.Join(dir, "b.db")), openFile(t, filepath.Join(dir, "c.db"))
	defer func() { dbA.Close(); dbC.Close() }()
	for _, db := range []*storage.DB{dbA, dbB, dbC} {
		fill(t, db, 3, 20)
	}
	on := propagate.DefaultParams()
	on.DispersionExtreme = true
	off := on
	off.DispersionExtreme = false
	oOn := Options{Predict: &on}
	sA, sB, sC := newScheduler(t, dbA, oOn), newScheduler(t, dbB, oOn), newScheduler(t, dbC, Options{Predict: &off})
	body := []byte(`{"size": 30}`) // half the catalogue: untried tasks run out, extreme ones are re-tried
	differ := 0
	for i := 1; i <= 14; i++ {
		if i == 6 || i == 11 {
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
		rollExtremeBinary(t, decode(t, raw), dbA, dbB)
		rollExtremeBinary(t, decode(t, c), dbC)
		if sa, sb := must(dbA.PredictorState()), must(dbB.PredictorState()); !bytes.Equal(sa, sb) {
			t.Fatalf("%s: the stored states differ after a restart", id)
		}
	}
	defer func() { dbB.Close() }()
	st := storedState(t, dbA)
	if st.Dispersion == nil || st.Dispersion.Extreme == nil || !(st.Dispersion.Extreme.N > 0) {
		t.Fatalf("dispersion %+v: no extreme map stored", st.Dispersion)
	}
	if stC := storedState(t, dbC); stC.Dispersion != nil && stC.Dispersion.Extreme != nil {
		t.Errorf("option off: extreme map %+v stored", *stC.Dispersion.Extreme)
	}
	if differ == 0 {
		t.Error("every answer the same with the option off: the extreme map changed nothing")
	}
	storagetest.MustCheck(t, dbA, "")
	storagetest.MustCheck(t, dbB, "")
}
