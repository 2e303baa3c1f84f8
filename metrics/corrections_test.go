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
		`envsched_correction_rechosen_trend_weight 0`, `envsched_correction_state{state="none"} 1`,
		`envsched_correction_state{state="stored"} 0`)
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
		`envsched_correction_rechosen_offset 0.5`, `envsched_correction_state{state="stored"} 1`,
		`envsched_correction_state{state="unreadable"} 0`)
	// a damaged state: the gauges show where the next answer starts, and say why
	if err := db.StoreAnswer("s2", 2, []byte("s2"), nil, []byte("\x04\x05damaged")); err != nil {
		t.Fatal(err)
	}
	has(text(), `envsched_correction_state{state="unreadable"} 1`, `envsched_correction_state{state="stored"} 0`,
		`envsched_correction_rechosen_factor 1`, `envsched_correction_scale{channel="never_tried"} 0.6`)
}

// TestGradedMapGauges: the graded calibration's maps stored with the last answer (a state in
// JSON, as an earlier version stored states) are gauges by channel and coefficient; none
// while no map is stored.
func TestGradedMapGauges(t *testing.T) {
	db := storagetest.Open(t)
	m := metrics.New(db, t.TempDir(), nil)
	text := func() string {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		return rec.Body.String()
	}
	if body := text(); strings.Contains(body, "envsched_correction_graded_map{") {
		t.Errorf("graded map gauges without a map:\n%s", body)
	}
	state := `{"dispersion": {"graded": {"rechosen": {"beta": [0.5, -0.25, 0, 0], "info": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1], "n": 12}}}}`
	if err := db.StoreAnswer("s1", 1, []byte("s1"), nil, []byte(state)); err != nil {
		t.Fatal(err)
	}
	body := text()
	for _, l := range []string{`envsched_correction_graded_map{channel="rechosen",coef="intercept"} 0.5`,
		`envsched_correction_graded_map{channel="rechosen",coef="slope"} -0.25`,
		`envsched_correction_graded_map_groups{channel="rechosen"} 12`} {
		if !strings.Contains(body, "\n"+l+"\n") {
			t.Errorf("no line %q in the metrics", l)
		}
	}
	if strings.Contains(body, `channel="never_tried",coef=`) {
		t.Errorf("a never-tried map shown though none is stored")
	}
}
