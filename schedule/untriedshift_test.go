package schedule

import (
	"fmt"
	"testing"

	"github.com/envsched/envsched/propagate"
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
