// Package par splits a loop over an index range among the CPUs, for the passes of propagate
// and batcher whose results per index do not depend on the split.
package par

import (
	"runtime"
	"sync"
)

// Ranges calls f over [0, n) in as many contiguous parts as GOMAXPROCS allows, each in its
// own goroutine, and waits for them. Below least indices, or with one CPU, it calls f(0, n)
// once in the caller's goroutine. The parts differ from one machine to another, so each
// index's result must depend on the index alone: then the split changes no number.
func Ranges(n, least int, f func(lo, hi int)) {
	parts := runtime.GOMAXPROCS(0)
	if n < least || parts < 2 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	for k := range parts {
		lo, hi := n*k/parts, n*(k+1)/parts
		wg.Go(func() { f(lo, hi) })
	}
	wg.Wait()
}
