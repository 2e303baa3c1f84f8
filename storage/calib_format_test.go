package storage

import (
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/envsched/envsched/ledger"
	"github.com/envsched/envsched/record"
)

// TestCalibrationReadsTheFirstFormat: the first version of the ledger wrote its totals without
// the restarted count and its pending predictions without a group key. A database it wrote is
// read (not reported corrupt), and its half-filled group goes on to be measured.
func TestCalibrationReadsTheFirstFormat(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "envsched.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Commit(&Batch{Tasks: []record.Task{{Env: "e", Task: "a"}}}); err != nil {
		t.Fatal(err)
	}
	a := AnswerRecord{ID: "r1", Step: 1, Answer: []byte("r1"), GroupSize: 2, Chosen: []TaskKey{{Env: "e", Task: "a"}},
		Predictions: []ledger.Prediction{{Env: "e", Task: "a", Rank: 1, PDegenerate: 0.5, Mean: 0.5}}}
	if err := db.StoreAnswerRecord(a); err != nil {
		t.Fatal(err)
	}
	// rewrite both values as the first version wrote them: one rollout of the group counted
	err = db.update(func(tx *bolt.Tx) error { // through db: a write around it is taken for an overwrite
		bk := tx.Bucket(bucketCalib)
		if err := bk.DeleteBucket(calibOpening); err != nil { // the first version put predictions in pending at once
			return err
		}
		if err := bk.Put(calibTotalsKey, enc(nil).uvar(1).uvar(0).uvar(0).uvar(0)); err != nil {
			return err
		}
		p := ledger.Pending{Request: "r1", Step: 1, GroupSize: 2, PDegenerate: 0.5, Mean: 0.5, N: 1, Min: 1, Max: 1, Sum: 1}
		old := enc(nil).str(p.Request).svar(p.Step).u8(uint8(p.Channel)).uvar(uint64(p.GroupSize)).
			f64(p.PDegenerate).f64(p.Mean).uvar(uint64(p.N)).f64(p.Min).f64(p.Max).f64(p.Sum)
		return bk.Bucket(calibPending).Put(pendingKey(1, 1, 1), old)
	})
	if err != nil {
		t.Fatal(err)
	}
	cal, err := db.Calibration(1)
	if err != nil || cal.Totals != (ledger.Totals{Opened: 1}) {
		t.Fatalf("first-format ledger: %+v, %v; want one open prediction", cal.Totals, err)
	}
	r := Rollout{Rollout: record.Rollout{Env: "e", Task: "a", Reward: 1, RequestID: "r1"}}
	if _, err := db.Commit(&Batch{Rollouts: []Rollout{r}}); err != nil {
		t.Fatal(err)
	}
	cal, err = db.Calibration(1)
	if err != nil || cal.Totals != (ledger.Totals{Opened: 1, Measured: 1}) || cal.Total().Degenerate != 1 {
		t.Fatalf("after the group's last rollout: %+v, %v; want it measured, all-equal", cal.Totals, err)
	}
}
