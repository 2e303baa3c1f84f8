package report_test

import (
	"fmt"
	"io"
	"testing"

	"github.com/envsched/envsched/report"
	"github.com/envsched/envsched/report/reporttest"
	"github.com/envsched/envsched/storage/storagetest"
)

// BenchmarkReport collects and renders the report of generated runs of growing size.
func BenchmarkReport(b *testing.B) {
	for _, steps := range []int{50, 400} {
		b.Run(fmt.Sprintf("steps=%d", steps), func(b *testing.B) {
			db := storagetest.Open(b)
			run, err := reporttest.Generate(db, reporttest.Options{Envs: 5, Tasks: 400, Steps: steps, BatchSize: 64, GroupSize: 8})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if err := report.Write(io.Discard, collect(b, db)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/report")
			b.ReportMetric(float64(run.Rollouts), "rollouts")
		})
	}
}
