package ingest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/envsched/envsched/storage"
)

// BenchmarkBarrierManyFiles measures the daemon's barrier (a full Scan) over a folder of many
// one-line rollout files that are all read already, and settled (unchanged for settleAfter): the cost every request pays when nothing is
// new (issue 12 case 14: 0.7-0.8 s a request at 50,000 files).
//
//	go test ./ingest -run '^$' -bench BarrierManyFiles -benchtime 10x
func BenchmarkBarrierManyFiles(b *testing.B) {
	for _, n := range []int{5_000, 50_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := b.TempDir()
			for i := range n {
				sub := filepath.Join(dir, "rollouts", fmt.Sprint(i%100))
				if i < 100 {
					if err := os.MkdirAll(sub, 0o755); err != nil {
						b.Fatal(err)
					}
				}
				line := fmt.Sprintf(`{"env":"e","task":"t%d","reward":1}`+"\n", i)
				if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%d.jsonl", i)), []byte(line), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			db, err := storage.Open(filepath.Join(dir, "envsched.db"), storage.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			in, err := New(db, dir, Options{})
			if err != nil {
				b.Fatal(err)
			}
			if s, err := in.Scan(context.Background()); err != nil || s.Rollouts != n {
				b.Fatalf("first scan: %+v, %v", s, err)
			}
			// A file is trusted by its stat alone once it has settled (settleAfter): before, every
			// scan opens it and checks its content. Let them settle, and have one scan see that.
			time.Sleep(settleAfter + 100*time.Millisecond)
			if _, err := in.Scan(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if s, err := in.Scan(context.Background()); err != nil || s.Rollouts != 0 {
					b.Fatalf("barrier: %+v, %v", s, err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/barrier")
			b.ReportMetric(0, "ns/op")
		})
	}
}
