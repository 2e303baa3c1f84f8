//go:build soak

package ingest

import (
	"fmt"
	"testing"
)

// TestFileIdentitySimulationSoak is the long run of the file-identity simulation:
// go test -tags soak ./ingest -run SimulationSoak
func TestFileIdentitySimulationSoak(t *testing.T) {
	for seed := uint64(1000); seed < 1300; seed++ {
		for _, noBirth := range []bool{false, true} {
			t.Run(fmt.Sprintf("seed=%d/noBirth=%v", seed, noBirth), func(t *testing.T) {
				newSim(t, seed, simOptions(seed, noBirth)).run(300)
			})
		}
	}
}
