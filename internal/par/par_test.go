package par

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// Every index is visited exactly once, whatever the number of CPUs and the size.
func TestRangesCoverEachIndexOnce(t *testing.T) {
	for _, procs := range []int{1, 2, 3, 8} {
		old := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 2, 3, 7, 100, 1001} {
			seen := make([]atomic.Int32, n)
			calls := atomic.Int32{}
			Ranges(n, 2, func(lo, hi int) {
				calls.Add(1)
				for i := lo; i < hi; i++ {
					seen[i].Add(1)
				}
			})
			for i := range seen {
				if c := seen[i].Load(); c != 1 {
					t.Errorf("GOMAXPROCS %d, n %d: index %d visited %d times", procs, n, i, c)
				}
			}
			if n < 2 && calls.Load() != 1 {
				t.Errorf("GOMAXPROCS %d, n %d (below least): %d calls, want 1", procs, n, calls.Load())
			}
		}
		runtime.GOMAXPROCS(old)
	}
}
