package metrics_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/envsched/envsched/metrics"
	"github.com/envsched/envsched/storage/storagetest"
)

// TestCorrectionGauges: the exposition text shows the corrections of the state stored with the
// last answer (a state as an earlier version stored it, in JSON: re-chosen offset and factor,
// what coverage and exploitation re-tries returned), and those the first answer starts from
// while none is stored.
func TestCorrectionGauges(t *testing.T) {
	db := storagetest.Open(t)
	m := metrics.New(db, t.TempDir(), nil)
	text := func() string {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		return rec.Body.String()
	}
	has := func(body string, lines ...string) {
		t.Helper()
		for _, l := range lines {
			if !strings.Contains(body, "\n"+l+"\n") {
				t.Errorf("no line %q in the metrics", l)
			}
		}
	}
	has(text(), `envsched_correction_scale{channel="never_tried"} 0.6`, `envsched_correction_scale{channel="rechosen"} 1`,
		`envsched_correction_return{name="coverage_return"} 1`, `envsched_correction_rechosen_factor 1`,
		`envsched_correction_rechosen_trend_weight 0`)
	state := `{"drift_offsets": {"web": 0.25}, "rechosen_offset": 0.5, "dispersion": {"rechosen_factor": 1.5,` +
		` "cover_signal": {"sum": 0, "n": 96}, "exploit_signal": {"sum": 80, "n": 100}}}`
	if err := db.StoreAnswer("s1", 1, []byte("s1"), nil, []byte(state)); err != nil {
		t.Fatal(err)
	}
	// (0 + 32·0.8) / (96 + 32) / 0.8 = 0.25 (propagate's TestCoverReturn)
	has(text(), `envsched_correction_return{name="coverage_return"} 0.25`,
		`envsched_correction_return_groups{name="coverage_return",side="measured"} 96`,
		`envsched_correction_return_groups{name="coverage_return",side="reference"} 100`,
		`envsched_correction_return{name="exploration_return"} 1`, `envsched_correction_rechosen_factor 1.5`,
		`envsched_correction_rechosen_offset 0.5`)
}
