package metrics_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/envsched/envsched/ingest"
	"github.com/envsched/envsched/metrics"
	"github.com/envsched/envsched/storage"
)

// BenchmarkScrape gathers every metric of a directory of many rollout files, all read: the
// cost of one scrape is dominated by listing and stat-ing the files for the ingest lag.
func BenchmarkScrape(b *testing.B) {
	for _, files := range []int{100, 2000} {
		b.Run(fmt.Sprintf("files=%d", files), func(b *testing.B) {
			dir := b.TempDir()
			sub := filepath.Join(dir, "rollouts", "run")
			if err := os.MkdirAll(sub, 0o755); err != nil {
				b.Fatal(err)
			}
			for i := range files {
				if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("%05d.jsonl", i)), []byte(rolloutLines(i*4, 4)), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			db, err := storage.Open(filepath.Join(dir, "envsched.db"), storage.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			in, err := ingest.New(db, dir, ingest.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := in.Scan(context.Background()); err != nil {
				b.Fatal(err)
			}
			m := metrics.New(db, dir, nil)
			for b.Loop() {
				if _, err := m.Gatherer().Gather(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/scrape")
		})
	}
}
