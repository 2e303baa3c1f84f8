package schedule

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/envsched/envsched/batcher"
	"github.com/envsched/envsched/graph/graphtest"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
)

// rollRandom commits a group of 8 rollouts at the answer's step for each chosen task, with
// rewards drawn from rng (the same draws in every database given the same seed).
func rollRandom(t *testing.T, a Answer, seed uint64, dbs ...*storage.DB) {
	t.Helper()
	for _, db := range dbs {
		rng := rand.New(rand.NewPCG(seed, 1))
		var b storage.Batch
		for _, task := range a.Tasks {
			for range 8 {
				b.Rollouts = append(b.Rollouts, storage.Rollout{Rollout: record.Rollout{Env: task.Env, Task: task.TaskID,
					Reward: float64(rng.IntN(2)), Step: a.Step, HasStep: true}})
			}
		}
		if _, err := db.Commit(&b); err != nil {
			t.Fatal(err)
		}
	}
}

// The feature prior's fit starts where the last answer's ended (stored with it), and the
// answers stay a function of the database: a scheduler that runs on (A) and one whose
// database is closed and opened again before every request (B) give the same bytes, the
// stored state carries the start, and the fit of A is not the fit from zero on the same
// state (it took another number of iterations in some answer: a fit that ignored the stored
// start would take as many as one from zero in every answer).
func TestWarmStartKeepsAnswersAFunctionOfTheDatabase(t *testing.T) {
	dbA, dbB, pathB := twinDBs(t)
	defer func() { dbA.Close(); dbB.Close() }()
	// The selection is that of the batches this property was first measured on, before the
	// transfer factor (batcher.Params.Transfer). With today's default selection the same test
	// draws other batches, and on those the warm fits took more iterations than fits from zero
	// (r3 72 against 64, r4 69 against 55; 338 against 323 in all): the start's saving depends
	// on the history, and is not guaranteed. What this test guards, that the stored start is
	// used and the answers stay a function of the database, holds either way.
	sel := batcher.DefaultParams()
	sel.Transfer = 0
	opts := Options{BuildGraph: DefaultBuildGraph, Select: &sel}
	sA := newScheduler(t, dbA, opts)
	body := []byte(`{"size": 200}`)
	warmIters, coldIters, differ := 0, 0, 0
	for i := 1; i <= 6; i++ {
		dbB.Close()
		dbB = openFile(t, pathB)
		sB := newScheduler(t, dbB, opts)
		id := fmt.Sprintf("r%d", i)
		a, b := must(sA.Answer(id, body)), must(sB.Answer(id, body))
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: the restarted scheduler answered otherwise:\n%s\n%s", id, b, a)
		}
		if len(storedState(t, dbA).PriorStart) == 0 {
			t.Fatalf("%s: no warm start stored", id)
		}
		if i > 1 {
			st, err := (&loader{db: dbA, build: DefaultBuildGraph}).load()
			if err != nil {
				t.Fatal(err)
			}
			cold, _ := propagate.NewPredictor(*sA.opts.Predict)
			if _, _, err := cold.Predict(st.g, st.tasks, st.lastStep, propagate.State{}); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: the warm fit took %d iterations, one from zero %d", id, sA.pred.FitIterations(), cold.FitIterations())
			if sA.pred.FitIterations() != cold.FitIterations() {
				differ++
			}
			warmIters += sA.pred.FitIterations()
			coldIters += cold.FitIterations()
		}
		rollRandom(t, decode(t, a), uint64(i), dbA, dbB)
	}
	// Whether the start saves iterations depends on the history: on the batches of the
	// predictions before calib4's centre (propagate's centrePrior and the neutral ties of the
	// dispersion correction) it saved 0-7 of about 70 an answer, 330 against 323 in all; on
	// today's it costs a few (r4: 73 against 56; 336 against 330 in all). A saving is a
	// benchmark's claim, not this test's: what it guards is that the start is used.
	t.Logf("the warm fits took %d iterations in all, from zero %d", warmIters, coldIters)
	if differ == 0 {
		t.Errorf("every warm fit took as many iterations as one from zero (%d in all): the stored start is not used", warmIters)
	}
}

// Between refits (propagate.Params.PriorRefit) an answer keeps the stored fit of the feature
// prior, and a scheduler whose database is closed and opened again before every request
// answers as the running one does, through kept fits and refits alike: whether the fit is
// kept is a function of the stored state (the rollouts its fit was made on) and the
// statistics.
func TestKeptPriorAcrossARestart(t *testing.T) {
	for _, refit := range []float64{0, 0.1} { // the default (kept while no rollout came), and --prior-refit 0.1
		t.Run(fmt.Sprint("refit=", refit), func(t *testing.T) { keptPriorAcrossARestart(t, refit) })
	}
}

// keptPriorAcrossARestart is TestKeptPriorAcrossARestart with --prior-refit refit: every
// third answer is followed by no rollouts, so that the next one keeps the fit at any refit.
func keptPriorAcrossARestart(t *testing.T, refit float64) {
	dbA, dbB, pathB := twinDBs(t)
	defer func() { dbA.Close(); dbB.Close() }()
	p := propagate.DefaultParams()
	p.Decay, p.PriorRefit = dbA.Config().Decay, refit
	opts := Options{BuildGraph: DefaultBuildGraph, Predict: &p}
	sA := newScheduler(t, dbA, opts)
	body := []byte(`{"size": 40}`)
	kept, refits := 0, 0
	var last int64
	for i := 1; i <= 24; i++ {
		dbB.Close()
		dbB = openFile(t, pathB)
		sB := newScheduler(t, dbB, opts)
		id := fmt.Sprintf("r%d", i)
		a, b := must(sA.Answer(id, body)), must(sB.Answer(id, body))
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: the restarted scheduler answered otherwise:\n%s\n%s", id, b, a)
		}
		if !bytes.Equal(storedState(t, dbA).PriorStart, storedState(t, dbB).PriorStart) {
			t.Fatalf("%s: the restarted scheduler stored another fit", id)
		}
		var ws propagate.WarmStart
		if err := ws.UnmarshalBinary(storedState(t, dbA).PriorStart); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		switch {
		case ws.Rollouts == 0:
		case ws.Rollouts == last:
			kept++
		default:
			refits++
		}
		last = ws.Rollouts
		if i%3 != 0 {
			rollRandom(t, decode(t, a), uint64(i), dbA, dbB)
		}
	}
	t.Logf("%d answers kept the stored fit, %d fitted again", kept, refits)
	if kept == 0 || refits < 2 {
		t.Errorf("%d answers kept the stored fit and %d fitted again: the test saw no kept fit or too few refits", kept, refits)
	}
}

// twinDBs opens two databases in a temporary folder holding the same 1,200-task catalogue, and
// returns them with the second's path (for tests that close and reopen it); the caller closes them.
func twinDBs(t *testing.T) (dbA, dbB *storage.DB, pathB string) {
	t.Helper()
	dir := t.TempDir()
	pathB = filepath.Join(dir, "b.db")
	dbA, dbB = openFile(t, filepath.Join(dir, "a.db")), openFile(t, pathB)
	cat := graphtest.Catalog(1200, 3, 9)
	for _, db := range []*storage.DB{dbA, dbB} {
		if _, err := db.Commit(&storage.Batch{Tasks: cat}); err != nil {
			t.Fatal(err)
		}
	}
	return dbA, dbB, pathB
}
