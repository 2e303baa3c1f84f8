// Package par splits a loop over an index range among the CPUs, for the passes of propagate
// and batcher whose results per index do not depend on the split.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// piecesPerCPU is how many contiguous pieces Ranges cuts a range into for each CPU. The pieces
// are taken one at a time by whichever worker is free, so that a worker the kernel leaves
// without a core (a shared machine: other processes, the garbage collector) holds up the
// pass by one piece, not by half the range; with two static halves the other core sat idle
// until the late half was done.
const piecesPerCPU = 8

// Ranges calls f over [0, n) in contiguous pieces, on as many goroutines as GOMAXPROCS allows
// (the caller's among them), and waits for them: each piece is taken by the first goroutine
// free. Below least indices, or with one CPU, it calls f(0, n) once in the caller's
// goroutine. The pieces and which goroutine runs each differ from one call to another, so
// each index's result must depend on the index alone: then the split changes no number.
func Ranges(n, least int, f func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if n < least || workers < 2 {
		f(0, n)
		return
	}
	pieces := min(n, workers*piecesPerCPU)
	var next atomic.Int64
	work := func() {
		for {
			k := int(next.Add(1) - 1)
			if k >= pieces {
				return
			}
			f(n*k/pieces, n*(k+1)/pieces)
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}
