package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
)

// TestNeverTriedOffsetAcrossARestart (propagate's NewShift, on by default): the never-tried
// offset is measured from the stored answers and rollouts alone, so a scheduler restarted
// twice on the database answers byte for byte what one that kept running does, and stores
// the same state; the offset is stored, and only the answers of selection's picks of tasks
// never tried differ from those of a scheduler with it off: every pick, and every other
// task's answer, is the same.
func TestNeverTriedOffsetAcrossARestart(t *testing.T) {
	tried := map[string]bool{} // fill rolled out the first half of the catalogue
	for i := range 90 {
		tried[fmt.Sprintf("env-%d/task-%03d", i/60, i%60)] = true
	}
	differ, untried := 0, 0
	tr := trio{perEnv: 60, body: `{"size": 32}`, steps: 10, restarts: []int{4, 8}, off: func(p *propagate.Params) { p.NewShift = false }}
	dbA, dbC := tr.run(t, func(id string, raw, c []byte, _ *storage.DB) {
		a, b := decode(t, raw), decode(t, c)
		samePicks(t, id, a, b, false)
		for k := range a.Tasks {
			x, y := a.Tasks[k], b.Tasks[k]
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
		for _, x := range a.Tasks {
			tried[x.Env+"/"+x.TaskID] = true
		}
	})
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
}

// TestFirstRequestInTwoPartsLeavesTheOffset: the first request's picks of tasks never tried
// are answered with the start (nothing measured), and their groups say nothing of the
// predictions' level, however they come back. Here a trainer asks for its second batch
// before the last of its first batch's rollouts are written: the first part measures
// something, and the rest, arriving after the second answer, must still be matched as
// answered with the start (stored as propagate.Baseline.Start) and leave the never-tried
// offset at 0, after a restart too. Each part is below the factor's minimum, so the first
// waits as pending groups (stored with which of them were answered with the start).
func TestFirstRequestInTwoPartsLeavesTheOffset(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/a.db"
	db := openFile(t, path)
	fill(t, db, 3, 60) // the first 90 tasks rolled out, the other 90 never
	s := newScheduler(t, db, Options{})
	body := []byte(`{"size": 32}`)
	r1 := decode(t, must(s.Answer("r1", body)))
	var untried []Task
	for _, x := range r1.Tasks {
		if k, _ := strconv.Atoi(strings.TrimPrefix(x.TaskID, "task-")); x.Env == "env-1" && k >= 30 || x.Env == "env-2" {
			if x.Reason != "random slot" {
				untried = append(untried, x)
			}
		}
	}
	if len(untried) < 10 {
		t.Fatalf("the first answer chose %d tasks never tried by selection; the test needs 10", len(untried))
	}
	solved := func(tasks []Task) { // every rollout solved: far above the ½ they were answered at
		var b storage.Batch
		for _, x := range tasks {
			for range 8 {
				b.Rollouts = append(b.Rollouts, storage.Rollout{Rollout: record.Rollout{Env: x.Env, Task: x.TaskID, Reward: 1, Step: r1.Step, HasStep: true}})
			}
		}
		if _, err := db.Commit(&b); err != nil {
			t.Fatal(err)
		}
	}
	solved(untried[:5])
	r2 := decode(t, must(s.Answer("r2", body)))
	again := map[string]bool{}
	for _, x := range r2.Tasks {
		again[x.Env+"/"+x.TaskID] = true
	}
	var rest []Task // the first answer's picks that the second did not choose again
	for _, x := range untried[5:] {
		if !again[x.Env+"/"+x.TaskID] {
			rest = append(rest, x)
		}
	}
	if len(rest) < 5 {
		t.Fatalf("%d of the first answer's untried picks left for the second part; the test needs 5", len(rest))
	}
	st := storedState(t, db)
	if st.Dispersion == nil || len(st.Dispersion.NewPending) != 5 {
		t.Fatalf("after the first part, stored dispersion %+v: want its 5 groups pending", st.Dispersion)
	}
	for i, g := range st.Dispersion.NewPending {
		if !g.Start {
			t.Errorf("pending group %d stored as not answered with the start", i)
		}
	}
	solved(rest)
	if err := db.Close(); err != nil { // restart between the parts' measurement and the next answer
		t.Fatal(err)
	}
	db = openFile(t, path)
	t.Cleanup(func() { db.Close() })
	s = newScheduler(t, db, Options{})
	must(s.Answer("r3", body))
	st = storedState(t, db)
	if st.Dispersion == nil || st.Dispersion.NewFactor == 0 {
		t.Fatalf("after the second part, stored dispersion %+v: want the never-tried factor measured", st.Dispersion)
	}
	if st.Dispersion.NewOffset != 0 {
		t.Errorf("the first answer's %d groups (all solved, answered at ½) moved the never-tried offset to %v; "+
			"want 0: they were answered with the start", 5+len(rest), st.Dispersion.NewOffset)
	}
	t.Logf("factor %.3f from %d groups of the first answer, offset %v", st.Dispersion.NewFactor, 5+len(rest), st.Dispersion.NewOffset)
}
