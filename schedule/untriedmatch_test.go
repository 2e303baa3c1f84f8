package schedule

import (
	"bytes"
	"testing"

	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/storage"
)

// TestNeverTriedFactorAcrossARestart (propagate's NewMatch and LowMatch, on by default): the
// never-tried factor, the low-value re-chosen factor and the groups waiting to measure them
// are measured from the stored answers and rollouts alone, so a scheduler restarted twice on
// the database answers byte for byte what one that kept running does, and stores the same
// state; the factors are stored, and the answers (what they say of the picks) differ from
// those of a scheduler with both off.
func TestNeverTriedFactorAcrossARestart(t *testing.T) {
	differ, pending := 0, 0
	tr := trio{perEnv: 40, body: `{"size": 12}`, steps: 9, restarts: []int{4, 7}, off: func(p *propagate.Params) { p.NewMatch, p.LowMatch = false, false }}
	dbA, dbC := tr.run(t, func(id string, raw, c []byte, dbA *storage.DB) {
		if !bytes.Equal(c, raw) {
			differ++
		}
		if st := storedState(t, dbA); st.Dispersion != nil && len(st.Dispersion.NewPending)+len(st.Dispersion.LowPending) > 0 {
			pending++
		}
	})
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
}
