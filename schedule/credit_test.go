package schedule

import (
	"fmt"
	"path/filepath"
	"slices"
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
	envCatalogue(t, db, 16, func(e int) int {
		if e < 2 {
			return 120
		}
		return 4
	})
}

// envCatalogue commits n(e) tasks, task-000 on, to each of the environments env-00 to
// env-(envs−1).
func envCatalogue(t *testing.T, db *storage.DB, envs int, n func(e int) int) {
	t.Helper()
	var b storage.Batch
	for e := range envs {
		for k := range n(e) {
			b.Tasks = append(b.Tasks, record.Task{Env: fmt.Sprintf("env-%02d", e), Task: fmt.Sprintf("task-%03d", k), Text: "solve it"})
		}
	}
	if _, err := db.Commit(&b); err != nil {
		t.Fatal(err)
	}
}

// picksAcrossRestarts asks steps requests of body of two schedulers on two databases that
// catalogue fills: A's keeps running, B's database is closed and opened again (a new
// scheduler) before each step in restartAt, and answerBoth fails the test unless both answer
// the same bytes. roll stores the rollouts of each answer in both. It checks both databases
// at the end and returns each environment's number of picks.
func picksAcrossRestarts(t *testing.T, catalogue func(*testing.T, *storage.DB), o Options, body []byte,
	steps int, restartAt []int, roll func(*testing.T, Answer, ...*storage.DB)) map[string]int {
	t.Helper()
	dir := t.TempDir()
	dbA, dbB := openFile(t, filepath.Join(dir, "a.db")), openFile(t, filepath.Join(dir, "b.db"))
	defer func() { dbA.Close() }()
	catalogue(t, dbA)
	catalogue(t, dbB)
	sA, sB := newScheduler(t, dbA, o), newScheduler(t, dbB, o)
	picks := map[string]int{}
	for i := 1; i <= steps; i++ {
		if slices.Contains(restartAt, i) {
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
		roll(t, a, dbA, dbB)
	}
	defer func() { dbB.Close() }()
	storagetest.MustCheck(t, dbA, "")
	storagetest.MustCheck(t, dbB, "")
	return picks
}

// TestMinimumCreditAcrossARestart (MinCredit on): the slots that honour a minimum below one slot over
// batches follow from the stored answers alone, so a scheduler restarted on the database
// answers byte for byte what one that kept running does, and over the batches every small
// environment gets its minimum share.
func TestMinimumCreditAcrossARestart(t *testing.T) {
	p := batcher.DefaultParams()
	p.MinCredit = true
	const steps = 12
	picks := picksAcrossRestarts(t, creditCatalogue, Options{Select: &p}, []byte(`{"size": 8}`), steps, []int{5, 9}, rollChosen)
	want := steps / 4 // floor(12 × 0.5·8/16)
	for e := range 16 {
		if env := fmt.Sprintf("env-%02d", e); picks[env] < want {
			t.Errorf("%s: %d picks in %d batches of 8, its minimum owes %d", env, picks[env], steps, want)
		}
	}
}
