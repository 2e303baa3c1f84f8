package metrics_test

import (
	"path/filepath"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/envsched/envsched/ledger"
	"github.com/envsched/envsched/metrics"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// gathered returns the value of every sample of the registry, by name and label values.
func gathered(t *testing.T, m *metrics.Metrics) map[string]float64 {
	t.Helper()
	fams, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		for _, s := range f.GetMetric() {
			key := f.GetName()
			for _, l := range s.GetLabel() {
				key += "," + l.GetName() + "=" + l.GetValue()
			}
			out[key] = value(s)
		}
	}
	return out
}

func value(s *dto.Metric) float64 {
	if s.Gauge != nil {
		return s.Gauge.GetValue()
	}
	return s.Counter.GetValue()
}

// TestCalibrationGauges answers with two predictions, completes one group, and reads the gauges.
func TestCalibrationGauges(t *testing.T) {
	dir := t.TempDir()
	db, err := storage.Open(filepath.Join(dir, "envsched.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Commit(&storage.Batch{Tasks: []record.Task{{Env: "web", Task: "a"}, {Env: "web", Task: "b"}}}); err != nil {
		t.Fatal(err)
	}
	a := storage.AnswerRecord{ID: "s1", Step: 1, Answer: []byte("s1"), GroupSize: 2,
		Chosen: []storage.TaskKey{{Env: "web", Task: "a"}, {Env: "web", Task: "b"}},
		Predictions: []ledger.Prediction{{Env: "web", Task: "a", Rank: 1, PDegenerate: 0.25, Mean: 0.5},
			{Env: "web", Task: "b", Rank: 2, PDegenerate: 0.75, Mean: 0.5, Random: true}}}
	if err := db.StoreAnswerRecord(a); err != nil {
		t.Fatal(err)
	}
	rs := []storage.Rollout{
		{Rollout: record.Rollout{Env: "web", Task: "a", Reward: 1, RequestID: "s1"}},
		{Rollout: record.Rollout{Env: "web", Task: "a", Reward: 1, RequestID: "s1"}},
		{Rollout: record.Rollout{Env: "web", Task: "b", Reward: 0, RequestID: "s1"}},
	}
	if _, err := db.Commit(&storage.Batch{Rollouts: rs}); err != nil {
		t.Fatal(err)
	}
	s := gathered(t, metrics.New(db, dir, nil))
	for key, want := range map[string]float64{
		"envsched_calibration_groups,channel=never_tried,window=all":               1,
		"envsched_calibration_groups,channel=random_slot,window=all":               0,
		"envsched_calibration_groups,channel=all,window=recent":                    1,
		"envsched_calibration_predicted_degenerate,channel=never_tried,window=all": 0.25,
		"envsched_calibration_realised_degenerate,channel=all,window=all":          1,
		"envsched_calibration_realised_mean,channel=all,window=all":                1,
		"envsched_calibration_reliability_groups,bin=0.2-0.3":                      1,
		"envsched_calibration_reliability_groups,bin=0.7-0.8":                      0,
		"envsched_calibration_open_predictions":                                    1,
		"envsched_calibration_unmatched_rollouts_total":                            0,
		// env mean 2/3 (rewards 1, 1, 0), G 2: (2/3)² + (1/3)² = 5/9, rounded to 4 decimals
		"envsched_random_degenerate_share_estimate,source=env_means": 0.5556,
	} {
		if got, ok := s[key]; !ok || got != want {
			t.Errorf("%s = %v (present %v); want %v", key, got, ok, want)
		}
	}
	storagetest.MustCheck(t, db, "")
}
