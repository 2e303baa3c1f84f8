package schedule

import (
	"testing"

	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/storage"
)

// TestRandomFactorAcrossARestart (propagate's RandomMatch, on by default): the random-slot
// factor and its window of groups are measured from the stored answers and rollouts alone,
// so a scheduler restarted twice on the database answers byte for byte what one that kept
// running does, and stores the same state; the factor is stored, and only the random slots'
// answers differ from those of a scheduler with it off: every other task, and every pick,
// is the same.
func TestRandomFactorAcrossARestart(t *testing.T) {
	differ, random := 0, 0
	tr := trio{perEnv: 60, body: `{"size": 32}`, steps: 10, restarts: []int{4, 8}, off: func(p *propagate.Params) { p.RandomMatch = false }}
	dbA, dbC := tr.run(t, func(id string, raw, c []byte, _ *storage.DB) {
		a, b := decode(t, raw), decode(t, c)
		samePicks(t, id, a, b, true)
		for k := range a.Tasks {
			x, y := a.Tasks[k], b.Tasks[k]
			if x.Reason == "random slot" {
				random++
				if x.PDegenerate != y.PDegenerate {
					differ++
				}
			} else if x.PDegenerate != y.PDegenerate || x.PredictedVariance != y.PredictedVariance {
				t.Errorf("%s rank %d (%s): p_degenerate %v with the factor, %v without", id, k+1, x.Reason, x.PDegenerate, y.PDegenerate)
			}
		}
	})
	st := storedState(t, dbA)
	if st.Dispersion == nil || st.Dispersion.RandomFactor == 0 || len(st.Dispersion.RandomWindow) == 0 {
		t.Fatalf("dispersion %+v: no random-slot factor stored", st.Dispersion)
	}
	if stC := storedState(t, dbC); stC.Dispersion != nil && (stC.Dispersion.RandomFactor != 0 || len(stC.Dispersion.RandomWindow) > 0) {
		t.Errorf("option off: factor %v, %d groups stored", stC.Dispersion.RandomFactor, len(stC.Dispersion.RandomWindow))
	}
	if differ == 0 {
		t.Errorf("no random slot's answer differs from the option off (%d random slots): the factor changed nothing", random)
	}
	t.Logf("factor %.4f on %d groups; %d of %d random slots answered differently from the option off", st.Dispersion.RandomFactor, len(st.Dispersion.RandomWindow), differ, random)
}
