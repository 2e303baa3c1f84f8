package schedule

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/envsched/envsched/batcher"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// rollStuckAndEven commits a group of 8 rollouts for each chosen task: tasks of an even number
// are stuck (all 0, or all ½ as a partial-credit grader gives, every group all-equal), the
// others alternate 0 and 1 (every group informative).
func rollStuckAndEven(t *testing.T, a Answer, dbs ...*storage.DB) {
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
					r = float64(k%4) / 4 // 0 or ½
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

// TestCoverReturnAcrossARestart (--coverage-return, the default): what coverage-driven re-tries returned is
// measured from the stored answers and rollouts alone, so a scheduler restarted on the database
// answers byte for byte what one that kept running does, and stores the same state. In this
// world the re-tries chosen for coverage (mostly of stuck tasks) return less than those chosen
// for their predicted spread, the measured return falls below 1 and the answers come to differ
// from those of a scheduler with the option off.
func TestCoverReturnAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	dbA, dbB, dbC := openFile(t, filepath.Join(dir, "a.db")), openFile(t, filepath.Join(dir, "b.db")), openFile(t, filepath.Join(dir, "c.db"))
	defer func() { dbA.Close(); dbC.Close() }()
	for _, db := range []*storage.DB{dbA, dbB, dbC} {
		fill(t, db, 3, 20)
	}
	on := batcher.DefaultParams()
	on.CoverReturn, on.CoverageWeight = true, 3 // a world small enough that coverage re-tries are many
	off := on
	off.CoverReturn = false
	oOn := Options{Select: &on}
	sA, sB, sC := newScheduler(t, dbA, oOn), newScheduler(t, dbB, oOn), newScheduler(t, dbC, Options{Select: &off})
	body := []byte(`{"size": 12}`)
	differ, covered := 0, 0
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
		a := decode(t, raw)
		c := must(sC.Answer(id, body))
		if !bytes.Equal(c, raw) {
			differ++
		}
		for _, e := range storedState(t, dbA).Baseline {
			if e.Cover && e.Age == 0 {
				covered++
			}
		}
		rollStuckAndEven(t, a, dbA, dbB)
		rollStuckAndEven(t, decode(t, c), dbC)
		sa, sb := must(dbA.PredictorState()), must(dbB.PredictorState())
		if !bytes.Equal(sa, sb) {
			t.Fatalf("%s: the stored states differ after a restart", id)
		}
	}
	defer func() { dbB.Close() }()
	st := storedState(t, dbA)
	if covered == 0 || st.Dispersion == nil || st.Dispersion.CoverSignal == nil || st.Dispersion.ExploitSignal == nil {
		t.Fatalf("%d baselines marked for coverage; dispersion %+v: nothing measured", covered, st.Dispersion)
	}
	ret := st.predictState().CoverReturn()
	if !(ret < 0.9) {
		t.Errorf("cover return %v (cover %+v, exploit %+v): want it below 0.9", ret, *st.Dispersion.CoverSignal, *st.Dispersion.ExploitSignal)
	}
	if differ == 0 {
		t.Error("every answer the same with the option off: the measured return changed nothing")
	}
	storagetest.MustCheck(t, dbA, "")
	storagetest.MustCheck(t, dbB, "")
}

// TestSelectionFollowsCoverReturn: with CoverReturn on (the default), the re-tries' coverage of
// a request is the configured one times what coverage-driven re-tries returned, as stored; off,
// it is the configured one whatever was measured.
func TestSelectionFollowsCoverReturn(t *testing.T) {
	p := batcher.DefaultParams()
	if !p.CoverReturn {
		t.Fatal("CoverReturn is off by default")
	}
	p.CoverReturn = false
	quarter := propagate.State{Dispersion: propagate.Dispersion{ // (0 + 32·0.8)/(96 + 32)/0.8
		CoverSignal: &propagate.Signal{Sum: 0, N: 96}, ExploitSignal: &propagate.Signal{Sum: 80, N: 100}}}
	if got := selectParams(p, quarter); got != p {
		t.Errorf("option off: %+v, want %+v", got, p)
	}
	p.CoverReturn = true
	if got := selectParams(p, quarter).RetryCoverage; got != 0.25 {
		t.Errorf("coverage re-tries never informative: retry coverage %v, want 0.25", got)
	}
	if got := selectParams(p, propagate.State{}); got != p {
		t.Errorf("nothing measured: %+v, want %+v", got, p)
	}
}
