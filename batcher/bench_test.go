package batcher

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/envsched/envsched/propagate"
)

// BenchmarkBatch measures one batch of 512 as the daemon makes it: propagation over the whole
// graph, then selection. The graph is graphtest.Random with about 10 edges per task over 20
// environments; half the tasks have a history. Figures: ms/batch, and the heap in use with the
// world, the predictor's buffers and one batch alive (heap-MiB).
func BenchmarkBatch(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		w := randomWorld(b, n, 20, 1, 0.5)
		req := Request{Size: 512, GroupSize: 8, Step: w.step, Seed: 1}
		b.Run(fmt.Sprintf("predict/N=%d", n), func(b *testing.B) {
			pr, _ := propagate.NewPredictor(propagate.DefaultParams())
			b.ReportAllocs()
			for b.Loop() {
				if _, err := pr.Predict(w.g, w.tasks, w.step); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
		})
		b.Run(fmt.Sprintf("select/N=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Select(w.g, w.preds, w.tasks, req, DefaultParams()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
		})
		b.Run(fmt.Sprintf("batch/N=%d", n), func(b *testing.B) {
			pr, _ := propagate.NewPredictor(propagate.DefaultParams())
			b.ReportAllocs()
			var batch Batch
			for b.Loop() {
				preds, err := pr.Predict(w.g, w.tasks, w.step)
				if err != nil {
					b.Fatal(err)
				}
				if batch, err = Select(w.g, preds, w.tasks, req, DefaultParams()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/batch")
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
			runtime.KeepAlive(batch)
			runtime.KeepAlive(pr)
		})
		runtime.KeepAlive(w)
	}
}
