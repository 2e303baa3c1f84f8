package export_test

import (
	"io"
	"testing"

	"github.com/envsched/envsched/export"
	"github.com/envsched/envsched/report/reporttest"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// BenchmarkExportRollouts writes every rollout of a generated run as JSON lines and as CSV.
func BenchmarkExportRollouts(b *testing.B) {
	db := storagetest.Open(b)
	run, err := reporttest.Generate(db, reporttest.Options{Envs: 5, Tasks: 400, Steps: 200, BatchSize: 64, GroupSize: 8})
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range []export.Format{export.JSONL, export.CSV} {
		b.Run(string(f), func(b *testing.B) {
			for b.Loop() {
				err := db.View(func(r *storage.Reader) error {
					_, err := export.Write(io.Discard, r, db.Config(), export.Rollouts, f)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(run.Rollouts)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
