//go:build soak

package ingest

import (
	"fmt"
	"testing"
)

// TestExactlyOnceSoak is the long run of the crash model: go test -tags soak ./ingest -run Soak
func TestExactlyOnceSoak(t *testing.T) {
	for seed := uint64(100); seed < 300; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { crashRun(t, seed, 400) })
	}
}
