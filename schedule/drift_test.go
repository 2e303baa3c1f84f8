package schedule

import (
	"bytes"
	"fmt"
	"github.com/envsched/envsched/batcher"
	"github.com/envsched/envsched/propagate"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

func openFile(t *testing.T, path string) *storage.DB {
	t.Helper()
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// rollChosen commits a group of 8 rollouts at the answer's step for each chosen task: all
// successes in env-0 and all failures in env-1, far from what was predicted, so that drift is
// measured in both environments.
func rollChosen(t *testing.T, a Answer, dbs ...*storage.DB) {
	t.Helper()
	for _, db := range dbs {
		var b storage.Batch
		for _, task := range a.Tasks {
			r := 0.0
			if task.Env == "env-0" {
				r = 1
			}
			for range 8 {
				b.Rollouts = append(b.Rollouts, storage.Rollout{Rollout: record.Rollout{Env: task.Env, Task: task.TaskID,
					Reward: r, Step: a.Step, HasStep: true}})
			}
		}
		if _, err := db.Commit(&b); err != nil {
			t.Fatal(err)
		}
	}
}

func storedOffsets(t *testing.T, db *storage.DB) map[string]float64 {
	t.Helper()
	return storedState(t, db).DriftOffsets
}

func storedState(t *testing.T, db *storage.DB) savedState {
	t.Helper()
	data, err := db.PredictorState()
	if err != nil || data == nil {
		t.Fatalf("stored predictor state %q, %v", data, err)
	}
	st, err := decodeSaved(data)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func stateOf(s *Scheduler) savedState { return s.saved }

func sameState(a, b savedState) bool {
	return maps.Equal(a.DriftOffsets, b.DriftOffsets) && a.Rechosen == b.Rechosen && reflect.DeepEqual(a.Dispersion, b.Dispersion)
}

// TestDriftOffsetsSurviveARestart answers r1..r5 over two databases in the same state: one
// scheduler never restarts (A), the other's database is closed and reopened with a new
// scheduler after r5 (B). The restarted scheduler must start from the offsets A has, and
// answer r6 exactly as A does.
func TestDriftOffsetsSurviveARestart(t *testing.T) {
	dir, dbA, dbB, sA, sB := twinSchedulers(t)
	body := []byte(`{"size": 20}`)
	for i := 1; i <= 5; i++ {
		id := fmt.Sprintf("r%d", i)
		a := answerBoth(t, sA, sB, id, body)
		if i < 5 { // nothing arrives after r5, so that A's next call measures nothing either
			rollChosen(t, decode(t, a), dbA, dbB)
		}
	}
	want := stateOf(sA)
	if len(want.DriftOffsets) == 0 || want.Rechosen == 0 || want.Dispersion == nil || want.Dispersion.Global == nil || want.Dispersion.Rechose == nil {
		t.Fatalf("predictor state %+v: want environment offsets, a re-chosen offset and measured dispersion, else this test proves nothing", want)
	}
	if want.Dispersion.Random == nil || want.Dispersion.RechosenFactor == 0 {
		t.Fatalf("dispersion %+v: want random slots and the re-chosen factor measured, else their restart is not shown", want.Dispersion)
	}
	if tr := want.Dispersion.Trend; tr == nil || tr.N == 0 || tr.Beta == [4]float64{} {
		t.Fatalf("re-chosen trend %+v: want it measured, else its restart is not shown", tr)
	}
	if !slices.ContainsFunc(want.Baseline, func(e baselineEntry) bool { return e.Tried && e.Own > 0 }) {
		t.Fatal("no baseline of a task tried before holds its own mean, so the trend's restart is not shown")
	}
	if got := storedState(t, dbB); !sameState(got, want) {
		t.Errorf("stored state %+v, want %+v", got, want)
	}
	if err := dbB.Close(); err != nil {
		t.Fatal(err)
	}

	dbB = openFile(t, filepath.Join(dir, "b.db"))
	defer dbB.Close()
	sB = newScheduler(t, dbB, Options{})
	if got := stateOf(sB); !sameState(got, want) || !reflect.DeepEqual(got.Baseline, want.Baseline) {
		t.Fatalf("state after the restart %+v, want %+v (the uninterrupted scheduler's)", got, want)
	}
	if !slices.ContainsFunc(want.Baseline, func(e baselineEntry) bool { return e.Random }) {
		t.Fatal("no baseline marked as a random slot, so the restart of that mark is not shown")
	}
	// the centres the dispersion correction's slope pulls towards (each environment's mean
	// shrunk towards all environments') are stored with the baselines and measured again
	// from them: two environments' centres at least, else their restart is not shown
	centres := map[float64]bool{}
	for _, e := range want.Baseline {
		centres[e.Centre] = true
	}
	if len(centres) < 2 {
		t.Fatalf("baselines hold the centres %v: want two at least", centres)
	}
	if _, err := sB.Answer("r3", body); err != nil {
		t.Fatal(err)
	}
	if got := storedState(t, dbB); !sameState(got, want) {
		t.Errorf("serving r3 again changed the stored state: %+v, want %+v", got, want)
	}
	noDrift := snapshotScheduler(t, dbB, filepath.Join(dir, "c.db"))
	defer noDrift.db.Close()

	a6, b6 := must(sA.Answer("r6", body)), must(sB.Answer("r6", body))
	if !bytes.Equal(a6, b6) {
		t.Errorf("r6 after a restart differs from r6 without one:\n%s\n%s", b6, a6)
	}
	if got := storedState(t, dbB); !sameState(got, stateOf(sA)) {
		t.Errorf("state stored with r6 %+v, want %+v", got, stateOf(sA))
	}
	assertMeansDiffer(t, decode(t, b6), decode(t, must(noDrift.Answer("r6", body))))
	storagetest.MustCheck(t, dbA, "")
	storagetest.MustCheck(t, dbB, "")
}

// snapshotScheduler copies db to path and returns a scheduler over the copy whose stored
// predictor state is set aside: what r6 would be without the stored offsets.
func snapshotScheduler(t *testing.T, db *storage.DB, path string) *Scheduler {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.WriteSnapshot(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	s := newScheduler(t, openFile(t, path), Options{})
	s.saved = savedState{} // the scheduler restores its predictor from it for every answer
	return s
}

// assertMeansDiffer checks that the tasks both answers chose have other predicted means, so
// that the restored offsets are shown to be used.
func assertMeansDiffer(t *testing.T, with, without Answer) {
	t.Helper()
	means := map[string]float64{}
	for _, task := range without.Tasks {
		means[task.Env+"/"+task.TaskID] = task.PredictedMean
	}
	common := 0
	for _, task := range with.Tasks {
		m, ok := means[task.Env+"/"+task.TaskID]
		if !ok {
			continue
		}
		common++
		if m == task.PredictedMean {
			t.Errorf("%s/%s: predicted mean %g with and without the restored offsets", task.Env, task.TaskID, m)
		}
	}
	if common == 0 {
		t.Error("the answers with and without the restored offsets share no task to compare")
	}
}

// TestDriftRateZeroKeepsStoredOffsets answers with drift correction off (an ablation, or
// `envsched batch --drift-rate 0`) after the offsets were measured: the stored offsets must
// stay for the next scheduler with drift on.
func TestDriftRateZeroKeepsStoredOffsets(t *testing.T) {
	db := openFile(t, filepath.Join(t.TempDir(), "a.db"))
	defer db.Close()
	fill(t, db, 2, 30)
	s := newScheduler(t, db, Options{})
	body := []byte(`{"size": 12}`)
	for _, id := range []string{"r1", "r2", "r3", "r4"} {
		rollChosen(t, decode(t, must(s.Answer(id, body))), db)
	}
	must(s.Answer("r5", body))
	before := storedOffsets(t, db)
	if len(before) == 0 {
		t.Fatal("no offsets measured: this test proves nothing")
	}
	off := propagate.DefaultParams()
	off.DriftRate = 0
	must(newScheduler(t, db, Options{Predict: &off}).Answer("ablation-1", body))
	if got := storedOffsets(t, db); !maps.Equal(got, before) {
		t.Errorf("an answer with drift off changed the stored offsets from %v to %v", before, got)
	}
}

// TestDriftMeasuredAcrossARestart: the rollouts of the last answer's tasks arrive while the
// scheduler is down. The restarted scheduler must measure them as the uninterrupted one does
// (the baseline of the answered tasks is stored with the answer), so the next answer and the
// stored state are the same.
func TestDriftMeasuredAcrossARestart(t *testing.T) {
	dir, dbA, dbB, sA, sB := twinSchedulers(t)
	body := []byte(`{"size": 12}`)
	for i := 1; i <= 3; i++ {
		id := fmt.Sprintf("r%d", i)
		a := answerBoth(t, sA, sB, id, body)
		if i < 3 {
			rollChosen(t, decode(t, a), dbA, dbB)
		}
	}
	if err := dbB.Close(); err != nil {
		t.Fatal(err)
	}
	// r3's rollouts arrive while B is down
	dbB = openFile(t, filepath.Join(dir, "b.db"))
	defer dbB.Close()
	r3 := decode(t, must(sA.Answer("r3", body)))
	rollChosen(t, r3, dbA, dbB)
	inBase := map[string]bool{}
	for _, e := range storedState(t, dbB).Baseline {
		inBase[e.Env+"/"+e.Task] = e.Age == 0
	}
	for _, task := range r3.Tasks {
		if !inBase[task.Env+"/"+task.TaskID] {
			t.Fatalf("%s/%s of the last answer is not in the stored baseline (or not as of that answer)", task.Env, task.TaskID)
		}
	}
	sB = newScheduler(t, dbB, Options{})
	a4, b4 := must(sA.Answer("r4", body)), must(sB.Answer("r4", body))
	if !bytes.Equal(a4, b4) {
		t.Errorf("r4 after a restart differs from r4 without one:\n%s\n%s", b4, a4)
	}
	if got, want := storedState(t, dbB), storedState(t, dbA); !sameState(got, want) {
		t.Errorf("state after r4 with a restart %+v, without %+v", got, want)
	}
}

// TestDecodeStateGivesTheStoredState: what report and stats predict with, as the scheduler
// would.
func TestDecodeStateGivesTheStoredState(t *testing.T) {
	db := openFile(t, filepath.Join(t.TempDir(), "a.db"))
	defer db.Close()
	fill(t, db, 2, 30)
	s := newScheduler(t, db, Options{})
	body := []byte(`{"size": 12}`)
	for i := 1; i <= 3; i++ {
		rollChosen(t, decode(t, must(s.Answer(fmt.Sprintf("r%d", i), body))), db)
	}
	must(s.Answer("r4", body))
	data, err := db.PredictorState()
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeState(data)
	if err != nil {
		t.Fatal(err)
	}
	want := stateOf(s)
	if !sameState(savedState{DriftOffsets: got.Offsets, Rechosen: got.Rechosen, Dispersion: &got.Dispersion}, want) || len(want.DriftOffsets) == 0 ||
		len(got.Baseline) != len(want.Baseline) || len(got.Baseline) < 12 {
		t.Errorf("decoded %+v, the scheduler's %+v", got, want)
	}
	for i := range got.Baseline {
		if got.Baseline[i] != want.Baseline[i].Baseline {
			t.Errorf("baseline %d: decoded %+v, the scheduler's %+v", i, got.Baseline[i], want.Baseline[i])
		}
	}
	if _, err := DecodeState([]byte("{")); err == nil {
		t.Error("a state that does not decode decoded without an error")
	}
}

// TestLateRolloutsAcrossARestart: an asynchronous trainer's rollouts of r1 arrive after r2 was
// answered, and while one scheduler is down. The restarted scheduler must answer r3 as the
// one that kept running (both measure against the stored baseline, which keeps r1's tasks).
func TestLateRolloutsAcrossARestart(t *testing.T) {
	dir, dbA, dbB, sA, sB := twinSchedulers(t)
	body := []byte(`{"size": 12}`)
	var ans []Answer
	for i := 1; i <= 2; i++ {
		id := fmt.Sprintf("r%d", i)
		a := answerBoth(t, sA, sB, id, body)
		ans = append(ans, decode(t, a))
	}
	// r1's tasks stay in the stored baseline (unless r2 chose them again), so that their late
	// rollouts are measured
	age := map[string]int{}
	for _, e := range storedState(t, dbB).Baseline {
		age[e.Env+"/"+e.Task] = e.Age
	}
	again := map[string]bool{}
	for _, task := range ans[1].Tasks {
		again[task.Env+"/"+task.TaskID] = true
	}
	for _, task := range ans[0].Tasks {
		if k := task.Env + "/" + task.TaskID; !again[k] && age[k] != 1 {
			t.Errorf("%s of r1 is not carried in the baseline stored with r2 (age %d, want 1)", k, age[k])
		}
	}
	if err := dbB.Close(); err != nil {
		t.Fatal(err)
	}
	dbB = openFile(t, filepath.Join(dir, "b.db"))
	defer dbB.Close()
	for _, a := range ans { // r1's rollouts come late, with r2's
		rollChosen(t, a, dbA, dbB)
	}
	sB = newScheduler(t, dbB, Options{})
	a3, b3 := must(sA.Answer("r3", body)), must(sB.Answer("r3", body))
	if !bytes.Equal(a3, b3) {
		t.Errorf("r3 after a restart with late rollouts differs from r3 without one:\n%s\n%s", b3, a3)
	}
	if len(stateOf(sA).DriftOffsets) == 0 {
		t.Error("no drift was measured, so this test proves nothing")
	}
}

// TestFailedRequestMovesNothing: a request that fails after the prediction (an unknown
// environment) leaves the drift state as it was: the next answer is the one a scheduler that
// never saw the failed request gives.
func TestFailedRequestMovesNothing(t *testing.T) {
	_, dbA, dbB, sA, sB := twinSchedulers(t)
	defer dbB.Close()
	body := []byte(`{"size": 12}`)
	a1 := decode(t, must(sA.Answer("r1", body)))
	must(sB.Answer("r1", body))
	rollChosen(t, a1, dbA, dbB)
	if _, err := sA.Answer("bad", []byte(`{"size": 12, "envs": ["nope"]}`)); err == nil {
		t.Fatal("a request for an unknown environment was answered")
	}
	rollChosen(t, a1, dbA, dbB)
	a2, b2 := must(sA.Answer("r2", body)), must(sB.Answer("r2", body))
	if !bytes.Equal(a2, b2) {
		t.Errorf("r2 after a failed request differs from r2 without one:\n%s\n%s", a2, b2)
	}
}

// TestEveryRolloutMeasuredOnce: r1's rollouts arrive before r2; nothing arrives between r2 and
// r3, so r3 must measure nothing (r1's tasks are carried in the baseline with their counts
// brought up to date, not measured again).
func TestEveryRolloutMeasuredOnce(t *testing.T) {
	db := openFile(t, filepath.Join(t.TempDir(), "a.db"))
	defer db.Close()
	fill(t, db, 2, 30)
	s := newScheduler(t, db, Options{})
	body := []byte(`{"size": 12}`)
	rollChosen(t, decode(t, must(s.Answer("r1", body))), db)
	must(s.Answer("r2", body))
	st2 := storedState(t, db)
	must(s.Answer("r3", body))
	st3 := storedState(t, db)
	if len(st2.DriftOffsets) == 0 {
		t.Fatal("nothing was measured at r2, so this test proves nothing")
	}
	if !sameState(st2, st3) {
		t.Errorf("no rollouts arrived after r2, yet r3 moved the offsets: %v %v → %v %v",
			st2.DriftOffsets, st2.Rechosen, st3.DriftOffsets, st3.Rechosen)
	}
}

// TestSplitGroupMeasuresItsOwnChannel: tasks never rolled out are chosen by r1 and their group
// arrives in two halves, one before r2 (which chooses other tasks) and one after. Both halves
// measure the environment's offset, the channel the tasks were chosen in; the re-chosen offset
// does not move, since no task was chosen again.
func TestSplitGroupMeasuresItsOwnChannel(t *testing.T) {
	db := openFile(t, filepath.Join(t.TempDir(), "a.db"))
	defer db.Close()
	fill(t, db, 2, 30) // env-1's tasks have no rollouts
	s := newScheduler(t, db, Options{})
	half := func(a Answer) {
		var b storage.Batch
		for _, task := range a.Tasks {
			for range 4 {
				b.Rollouts = append(b.Rollouts, storage.Rollout{Rollout: record.Rollout{Env: task.Env, Task: task.TaskID,
					Reward: 1, Step: a.Step, HasStep: true}})
			}
		}
		if _, err := db.Commit(&b); err != nil {
			t.Fatal(err)
		}
	}
	a1 := decode(t, must(s.Answer("r1", []byte(`{"size": 12, "envs": ["env-1"]}`))))
	for _, task := range a1.Tasks {
		if task.Env != "env-1" {
			t.Fatalf("r1 chose %s/%s", task.Env, task.TaskID)
		}
	}
	half(a1)
	must(s.Answer("r2", []byte(`{"size": 12, "envs": ["env-0"]}`)))
	st2 := storedState(t, db)
	half(a1)
	must(s.Answer("r3", []byte(`{"size": 12, "envs": ["env-0"]}`)))
	st3 := storedState(t, db)
	if st3.Rechosen != st2.Rechosen {
		t.Errorf("the second half of a group of tasks chosen once moved the re-chosen offset: %v → %v", st2.Rechosen, st3.Rechosen)
	}
	if !(st3.DriftOffsets["env-1"] > st2.DriftOffsets["env-1"]) {
		t.Errorf("the second half (all successes) did not move env-1's offset up: %v → %v", st2.DriftOffsets["env-1"], st3.DriftOffsets["env-1"])
	}
}

// twinSchedulers returns two databases in the same state (two environments of 30 tasks, in
// dir) and a scheduler over each, for tests that restart one and not the other. dbA is closed
// when the test ends; dbB is the test's to close (it is the one restarted).
func twinSchedulers(t *testing.T) (dir string, dbA, dbB *storage.DB, sA, sB *Scheduler) {
	t.Helper()
	dir = t.TempDir()
	dbA, dbB = openFile(t, filepath.Join(dir, "a.db")), openFile(t, filepath.Join(dir, "b.db"))
	t.Cleanup(func() { dbA.Close() })
	fill(t, dbA, 2, 30)
	fill(t, dbB, 2, 30)
	return dir, dbA, dbB, newScheduler(t, dbA, Options{}), newScheduler(t, dbB, Options{})
}

// answerBoth answers id on both schedulers, which must be in the same state, and returns the
// answer.
func answerBoth(t *testing.T, sA, sB *Scheduler, id string, body []byte) []byte {
	t.Helper()
	a, b := must(sA.Answer(id, body)), must(sB.Answer(id, body))
	if !bytes.Equal(a, b) {
		t.Fatalf("%s: the two databases are not in the same state:\n%s\n%s", id, a, b)
	}
	return a
}

// TestSelectionFollowsExplorationReturn: the coverage weight of a request is the configured
// one times what exploring returned, as stored; with nothing measured it is the configured one.
func TestSelectionFollowsExplorationReturn(t *testing.T) {
	p := batcher.DefaultParams()
	half := propagate.State{Dispersion: propagate.Dispersion{
		NewSignal: &propagate.Signal{Sum: 20, N: 40}, ReSignal: &propagate.Signal{Sum: 40, N: 40}}}
	if got := selectParams(p, half).CoverageWeight; got != p.CoverageWeight/2 {
		t.Errorf("untried tasks returned half the signal: coverage weight %v, want %v", got, p.CoverageWeight/2)
	}
	if got := selectParams(p, propagate.State{}); got != p {
		t.Errorf("nothing measured: %+v, want %+v", got, p)
	}
	// random slots of untried tasks: 10 signal over 40 groups against the other untried
	// groups' 40 over 40
	quarter := propagate.State{Dispersion: propagate.Dispersion{NewSignal: &propagate.Signal{Sum: 50, N: 80},
		ReSignal: &propagate.Signal{Sum: 40, N: 40}, RandSignal: &propagate.Signal{Sum: 10, N: 40}}}
	if got := selectParams(p, quarter).RandomReturn; got != p.RandomReturn/4 {
		t.Errorf("random slots returned a quarter of the chosen untried tasks' signal: random return %v, want %v", got, p.RandomReturn/4)
	}
}

// TestRandomSlotsAreMarkedInTheBaseline: the baseline stored with an answer marks the tasks
// that were its random slots, and only those, so that the next answer measures what random
// slots return; entries carried from older answers keep their mark.
func TestRandomSlotsAreMarkedInTheBaseline(t *testing.T) {
	_, dbA, _, sA, _ := twinSchedulers(t)
	body := []byte(`{"size": 40}`)
	a := decode(t, must(sA.Answer("r1", body)))
	random := map[string]bool{}
	for _, task := range a.Tasks {
		if task.Reason == batcher.ReasonRandom {
			random[task.Env+"/"+task.TaskID] = true
		}
	}
	if len(random) != 2 {
		t.Fatalf("%d random slots in a batch of 40, want 2", len(random))
	}
	st := storedState(t, dbA)
	marked := 0
	for _, e := range st.Baseline {
		if e.Random != random[e.Env+"/"+e.Task] {
			t.Errorf("baseline of %s/%s marked random %v", e.Env, e.Task, e.Random)
		}
		if e.Random {
			marked++
		}
	}
	if marked != len(random) {
		t.Errorf("%d baselines marked random, want %d", marked, len(random))
	}
	rollChosen(t, a, dbA)
	must(sA.Answer("r2", []byte(`{"size": 4}`)))
	carried := 0
	for _, e := range storedState(t, dbA).Baseline {
		if e.Age == 1 && e.Random {
			carried++
		}
	}
	if carried == 0 {
		t.Error("no baseline carried from r1 kept its random mark")
	}
}

// TestPicksAreAnsweredAsTheyWerePicked: two schedulers in the same state but
// for what random slots measured and the re-chosen factor (B forgets both before r6) choose
// the same tasks in r6 and predict every pick alike but the re-chosen picks, whose
// predictions follow the factor, and the random slots, whose predictions follow what random
// slots measured: in this world (random slots always or never solved, every other pick half
// the time) it makes them surer to be degenerate.
func TestPicksAreAnsweredAsTheyWerePicked(t *testing.T) {
	_, dbA, dbB, sA, sB := twinSchedulers(t)
	body := []byte(`{"size": 20}`)
	for i := 1; i <= 5; i++ {
		rollSlotsApart(t, decode(t, answerBoth(t, sA, sB, fmt.Sprintf("r%d", i), body)), dbA, dbB)
	}
	if sB.saved.Dispersion == nil || sB.saved.Dispersion.Random == nil {
		t.Fatalf("dispersion %+v: no random slot measured", sB.saved.Dispersion)
	}
	if sB.saved.Dispersion.RechosenFactor == 0 {
		t.Fatalf("dispersion %+v: no re-chosen factor measured", sB.saved.Dispersion)
	}
	tried := map[string]bool{}
	for _, e := range sB.saved.Baseline {
		tried[e.Env+"/"+e.Task] = true // every task of r1-r5 was rolled out
	}
	forgot := *sB.saved.Dispersion
	forgot.Random, forgot.RechosenFactor = nil, 0
	sB.saved.Dispersion = &forgot
	a6, b6 := decode(t, must(sA.Answer("r6", body))), decode(t, must(sB.Answer("r6", body)))
	rechosen := 0
	if len(a6.Tasks) != len(b6.Tasks) {
		t.Fatalf("r6: %d and %d tasks", len(a6.Tasks), len(b6.Tasks))
	}
	slots := 0
	for i, ta := range a6.Tasks {
		tb := b6.Tasks[i]
		if ta.Env != tb.Env || ta.TaskID != tb.TaskID || ta.Reason != tb.Reason {
			t.Fatalf("pick %d: %s/%s (%s) and %s/%s (%s): what random slots measured changed the choice",
				i, ta.Env, ta.TaskID, ta.Reason, tb.Env, tb.TaskID, tb.Reason)
		}
		if ta.Reason != batcher.ReasonRandom && tried[ta.Env+"/"+ta.TaskID] {
			rechosen++
			if ta.PDegenerate == tb.PDegenerate {
				t.Errorf("re-chosen pick %s/%s: p_degenerate %v with and without the re-chosen factor", ta.Env, ta.TaskID, ta.PDegenerate)
			}
			continue
		}
		if ta.Reason != batcher.ReasonRandom {
			if ta.PDegenerate != tb.PDegenerate || ta.PredictedMean != tb.PredictedMean {
				t.Errorf("pick %d (%s): p_degenerate %v and %v, mean %v and %v: want the same", i, ta.Reason,
					ta.PDegenerate, tb.PDegenerate, ta.PredictedMean, tb.PredictedMean)
			}
			continue
		}
		slots++
		if !(ta.PDegenerate > tb.PDegenerate) {
			t.Errorf("random slot %s/%s: p_degenerate %v with what random slots measured, %v without: want more",
				ta.Env, ta.TaskID, ta.PDegenerate, tb.PDegenerate)
		}
	}
	if slots == 0 || rechosen == 0 {
		t.Fatalf("r6 has %d random slots and %d re-chosen picks: want both", slots, rechosen)
	}
}

// rollSlotsApart commits a group of 8 rollouts for every task of a into each database: a
// random slot's all 1 (env-0) or all 0, every other pick's half 1.
func rollSlotsApart(t *testing.T, a Answer, dbs ...*storage.DB) {
	t.Helper()
	for _, db := range dbs {
		var b storage.Batch
		for _, task := range a.Tasks {
			for j := range 8 {
				r := float64(j % 2)
				if task.Reason == batcher.ReasonRandom {
					r = map[bool]float64{true: 1, false: 0}[task.Env == "env-0"]
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
