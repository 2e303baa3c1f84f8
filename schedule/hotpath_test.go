package schedule

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/envsched/envsched/graph/graphtest"
	"github.com/envsched/envsched/storage"
)

// retiredMask marks the same nodes as a pass over every node, for few retired tasks (found by
// binary search) and many (the pass), with tasks not in the graph and entries set to false.
func TestRetiredMaskSameAsScan(t *testing.T) {
	g := graphtest.Random(3000, 7, 4, 5)
	for _, share := range []float64{0, 0.001, 0.02, 0.05, 0.3, 1} {
		rng := rand.New(rand.NewPCG(uint64(share*1000), 1))
		ret := map[storage.TaskKey]bool{}
		for _, nd := range g.Nodes {
			if rng.Float64() < share {
				ret[storage.TaskKey{Env: g.Envs[nd.Env], Task: nd.Task}] = rng.IntN(10) > 0
			}
		}
		ret[storage.TaskKey{Env: g.Envs[0], Task: "not-a-node"}] = true
		ret[storage.TaskKey{Env: "no-such-env", Task: g.Nodes[0].Task}] = true
		want := make([]bool, g.Len())
		for i, nd := range g.Nodes {
			want[i] = ret[storage.TaskKey{Env: g.Envs[nd.Env], Task: nd.Task}]
		}
		if got := retiredMask(g, ret); !slices.Equal(got, want) {
			t.Errorf("share %g (%d retired): the mask differs from the scan's", share, len(ret))
		}
	}
}
