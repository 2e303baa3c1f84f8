package schedule

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/envsched/envsched/batcher"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// creditCatalogue is two big environments and fourteen of four tasks each: at size 8 the
// minimum (half the uniform share) is a quarter of a slot.
func creditCatalogue(t *testing.T, db *storage.DB) {
	t.Helper()
	var b storage.Batch
	for e := range 16 {
		n := 4
		if e < 2 {
			n = 120
		}
		for k := range n {
			b.Tasks = append(b.Tasks, record.Task{Env: fmt.Sprintf("env-%02d", e), Task: fmt.Sprintf("task-%03d", k), Text: "solve it"})
		}
	}
	if _, err := db.Commit(&b); err != nil {
		t.Fatal(err)
	}
}

// TestMinimumCreditAcrossARestart (MinCredit on): the slots that honour a minimum below one slot over
// batches follow from the stored answers alone, so a scheduler restarted on the database
// answers byte for byte what one that kept running does, and over the batches every small
// environment gets its minimum share.
func TestMinimumCreditAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	dbA, dbB := openFile(t, filepath.Join(dir, "a.db")), openFile(t, filepath.Join(dir, "b.db"))
	defer func() { dbA.Close() }()
	creditCatalogue(t, dbA)
	creditCatalogue(t, dbB)
	p := batcher.DefaultParams()
	p.MinCredit = true
	o := Options{Select: &p}
	sA, sB := newScheduler(t, dbA, o), newScheduler(t, dbB, o)
	body := []byte(`{"size": 8}`)
	const steps = 12
	picks := map[string]int{}
	for i := 1; i <= steps; i++ {
		if i == 5 || i == 9 {
			if err := dbB.Close(); err != nil {
				t.Fatal(err)
			}
			dbB = openFile(t, filepath.Join(dir, "b.db"))
			sB = newScheduler(t, dbB, o)
		}
		a := decode(t, answerBoth(t, sA, sB, fmt.Sprintf("r%02d", i), body))
		for _, task := range a.Tasks {
			picks[task.Env]++
		}
		rollChosen(t, a, dbA, dbB)
	}
	defer func() { dbB.Close() }()
	want := steps / 4 // floor(12 × 0.5·8/16)
	for e := range 16 {
		if env := fmt.Sprintf("env-%02d", e); picks[env] < want {
			t.Errorf("%s: %d picks in %d batches of 8, its minimum owes %d", env, picks[env], steps, want)
		}
	}
	storagetest.MustCheck(t, dbA, "")
	storagetest.MustCheck(t, dbB, "")
}
