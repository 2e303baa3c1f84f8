package batcher

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/record"
)

// cpuTime is the CPU time the process has used (user and system, all threads).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportTimes reports wall and CPU milliseconds per operation. On a shared machine the CPU
// figure is the steadier one: wall time there includes waiting for a core.
func reportTimes(b *testing.B, cpu0 time.Duration, unit string) {
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/"+unit)
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/"+unit)
}

// BenchmarkBatch measures one batch of 512 as the daemon makes it: propagation over the whole
// graph, then selection (batch); and the parts alone, with propagation over two hops beside
// the default one. The graph is graphtest.Random with about 10 edges per task over 20
// environments; half the tasks have a history. Figures: ms/batch, and the heap in use with the
// world, the predictor's buffers and one batch alive (heap-MiB).
func BenchmarkBatch(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		w := randomWorld(b, n, 20, 1, 0.5)
		req := Request{Size: 512, GroupSize: 8, Step: w.step, Seed: 1}
		b.Run(fmt.Sprintf("predict/N=%d", n), func(b *testing.B) {
			pr, _ := propagate.NewPredictor(propagate.DefaultParams())
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				if _, _, err := pr.Predict(w.g, w.tasks, w.step, propagate.State{}); err != nil {
					b.Fatal(err)
				}
			}
			reportTimes(b, cpu0, "op")
		})
		b.Run(fmt.Sprintf("predict-hops2/N=%d", n), func(b *testing.B) {
			p := propagate.DefaultParams()
			p.Hops = 2
			pr, _ := propagate.NewPredictor(p)
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				if _, _, err := pr.Predict(w.g, w.tasks, w.step, propagate.State{}); err != nil {
					b.Fatal(err)
				}
			}
			reportTimes(b, cpu0, "op")
		})
		b.Run(fmt.Sprintf("select/N=%d", n), func(b *testing.B) {
			var sel Selector
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				if _, err := sel.Select(w.g, w.preds, w.tasks, req, DefaultParams()); err != nil {
					b.Fatal(err)
				}
			}
			reportTimes(b, cpu0, "op")
		})
		b.Run(fmt.Sprintf("select-notransfer/N=%d", n), func(b *testing.B) {
			p := DefaultParams()
			p.Transfer = 0 // the cost of the transfer factor, side by side with select
			var sel Selector
			cpu0 := cpuTime()
			for b.Loop() {
				if _, err := sel.Select(w.g, w.preds, w.tasks, req, p); err != nil {
					b.Fatal(err)
				}
			}
			reportTimes(b, cpu0, "op")
		})
		b.Run(fmt.Sprintf("select-lasting/N=%d", n), func(b *testing.B) {
			p := DefaultParams()
			p.Exploit = ExploitLasting // the cost of the lasting measure, side by side with select
			h := LastingHorizon(w.tasks)
			var sel Selector
			cpu0 := cpuTime()
			for b.Loop() {
				if _, err := sel.Select(w.g, w.preds, w.tasks, req, p); err != nil {
					b.Fatal(err)
				}
			}
			reportTimes(b, cpu0, "op")
			b.ReportMetric(float64(h), "horizon")
		})
		b.Run(fmt.Sprintf("batch/N=%d", n), func(b *testing.B) {
			pr, _ := propagate.NewPredictor(propagate.DefaultParams())
			var sel Selector
			b.ReportAllocs()
			var batch Batch
			cpu0 := cpuTime()
			for b.Loop() {
				preds, _, err := pr.Predict(w.g, w.tasks, w.step, propagate.State{})
				if err != nil {
					b.Fatal(err)
				}
				if batch, err = sel.Select(w.g, preds, w.tasks, req, DefaultParams()); err != nil {
					b.Fatal(err)
				}
			}
			reportTimes(b, cpu0, "batch")
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
			runtime.KeepAlive(batch)
			runtime.KeepAlive(pr)
			runtime.KeepAlive(&sel)
		})
		b.Run(fmt.Sprintf("batch-loads/N=%d", n), func(b *testing.B) {
			// as the scheduler makes it: the transfer factor's loads taken in propagate's walk
			// over the edges (propagate.Params.Loads), not in a walk of selection's own
			p := propagate.DefaultParams()
			p.Loads = true
			pr, _ := propagate.NewPredictor(p)
			var sel Selector
			cpu0 := cpuTime()
			for b.Loop() {
				preds, _, err := pr.Predict(w.g, w.tasks, w.step, propagate.State{})
				if err != nil {
					b.Fatal(err)
				}
				r := req
				r.Loads = pr.Loads()
				if _, err = sel.Select(w.g, preds, w.tasks, r, DefaultParams()); err != nil {
					b.Fatal(err)
				}
			}
			reportTimes(b, cpu0, "batch")
		})
		runtime.KeepAlive(w)
	}
}

// BenchmarkRepeats measures the largest batch (MaxSize-like, 100,000 slots) over one small
// environment of a large graph, with repeats: a request a trainer may write. Each round of
// repeats must cost what it chooses, not a pass over the whole graph. Figure: ms/batch.
func BenchmarkRepeats(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		w := randomWorld(b, n, n/5, 1, 0.5) // about 5 tasks per environment
		req := Request{Size: 100_000, GroupSize: 8, Step: w.step, Seed: 1, AllowRepeats: true,
			Envs: []string{w.g.Envs[0]}}
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			var sel Selector
			cpu0 := cpuTime()
			for b.Loop() {
				if _, err := sel.Select(w.g, w.preds, w.tasks, req, DefaultParams()); err != nil {
					b.Fatal(err)
				}
			}
			reportTimes(b, cpu0, "batch")
		})
	}
}

// BenchmarkOverlap is select at N tasks with and without Params.Overlap, side by side, on
// graphtest.Random with catalogue words: 4 of its environment's 40 and 8 of 4,000 shared ones
// (drawn with a skew, a few words common and many rare) per task. Figures: ms and cpu-ms per
// batch of 512.
func BenchmarkOverlap(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		w := randomWorld(b, n, 20, 1, 0.5)
		rng := rand.New(rand.NewPCG(9, 9))
		rows := make([]record.Task, n)
		for i, nd := range w.g.Nodes {
			var sb strings.Builder
			for range 4 {
				fmt.Fprintf(&sb, "env%dword%d ", nd.Env, rng.IntN(40))
			}
			for range 8 {
				u := rng.Float64()
				fmt.Fprintf(&sb, "word%d ", int(4000*u*u*u))
			}
			rows[i] = record.Task{Env: w.g.Envs[nd.Env], Task: nd.Task, Text: sb.String()}
		}
		g := w.g.WithFeatures(graph.TextFeatures(rows))
		req := Request{Size: 512, GroupSize: 8, Step: w.step, Seed: 1}
		for _, ov := range []float64{0, 0.3} {
			b.Run(fmt.Sprintf("select-overlap%v/N=%d", ov, n), func(b *testing.B) {
				p := DefaultParams()
				p.Overlap = ov
				var sel Selector
				cpu0 := cpuTime()
				for b.Loop() {
					if _, err := sel.Select(g, w.preds, w.tasks, req, p); err != nil {
						b.Fatal(err)
					}
				}
				reportTimes(b, cpu0, "op")
			})
		}
	}
}
