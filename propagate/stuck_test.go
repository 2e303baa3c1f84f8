package propagate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

// stuckWorld is one environment of 300 tasks: six in ten are stuck (never or always solved),
// the others learnable, with a success chance between 0.03 and 0.97 that does not move.
type stuckWorld struct {
	g     *graph.Graph
	tasks []stats.Task
	p     []float64
	rng   *rand.Rand
}

func newStuckWorld() *stuckWorld {
	const n = 300
	w := &stuckWorld{tasks: make([]stats.Task, n), p: make([]float64, n), rng: rand.New(rand.NewPCG(7, 13))}
	nodes := make([]graph.Node, n)
	for i := range n {
		nodes[i] = graph.Node{Env: 0, Task: fmt.Sprintf("t%03d", i)}
		switch {
		case i%10 < 6:
			w.p[i] = float64(i % 2)
		default:
			w.p[i] = 0.03 + 0.94*math.Mod(float64(i)*0.618034, 1)
		}
	}
	w.g = graph.New([]string{"e"}, nodes, nil)
	return w
}

// group rolls out one group of 8 of node i in round and reports whether it was all-equal.
func (w *stuckWorld) group(i int, round int64) bool {
	var grp stats.Group
	k := 0
	for range 8 {
		r := bernoulli(w.rng, w.p[i])
		k += int(r)
		w.tasks[i].Add(r, round, round, true, &grp, stats.DefaultDecay)
	}
	return k == 0 || k == 8
}

// stuckCalibration plays the world for 60 rounds after one group of every task: each round it
// re-tries the next 12 of the tasks seen only all-equal and the next 12 of the others (in
// turn, whatever their predictions, so that nothing but the predictions is measured), and
// returns, over rounds 21 on, the mean chance of an all-equal group that the answer gives the
// re-tries of stuck tasks and the share of them that came back all-equal.
func stuckCalibration(t *testing.T, p Params) (predicted, realised float64, n int) {
	t.Helper()
	w := newStuckWorld()
	pr, err := NewPredictor(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range w.tasks {
		w.group(i, 1)
	}
	var st State
	nextStuck, nextOther := 0, 0
	pick := func(stuck bool, from *int, k int) []int {
		var out []int
		for range len(w.tasks) {
			if len(out) == k {
				break
			}
			i := *from % len(w.tasks)
			*from++
			if stuckTask(&w.tasks[i]) == stuck {
				out = append(out, i)
			}
		}
		return out
	}
	var sumPred, sumReal float64
	for round := int64(2); round <= 61; round++ {
		preds, next, err := pr.Predict(w.g, w.tasks, round, st)
		if err != nil {
			t.Fatal(err)
		}
		stuck := pick(true, &nextStuck, 12)
		chosen := append(append([]int(nil), stuck...), pick(false, &nextOther, 12)...)
		next.Baseline = Baselines(w.g, w.tasks, preds, chosen)
		st = next
		answer := pr.Picker(st)
		var pdeg []float64
		for _, i := range stuck {
			pdeg = append(pdeg, answer(preds[i], true, false).PDegenerate(8))
		}
		for k, i := range chosen {
			deg := w.group(i, round)
			if k < len(stuck) && round >= 21 {
				sumPred += pdeg[k]
				if deg {
					sumReal++
				}
				n++
			}
		}
	}
	return sumPred / float64(n), sumReal / float64(n), n
}

// TestStuckRetriesAreCalibrated (Params.DispersionStuck): in a world where most tasks seen
// only all-equal stay so, the re-tries of such tasks are predicted within 0.05 of the share
// that comes back all-equal with the stuck map; without it their evidence decays towards the
// environment's middle and they are predicted far more informative than they are.
func TestStuckRetriesAreCalibrated(t *testing.T) {
	on := DefaultParams()
	on.DispersionStuck = true
	off := on
	off.DispersionStuck = false
	pOn, rOn, n := stuckCalibration(t, on)
	pOff, rOff, _ := stuckCalibration(t, off)
	t.Logf("stuck re-tries (%d): with the map predicted %.3f, realised %.3f; without %.3f, %.3f", n, pOn, rOn, pOff, rOff)
	if n < 300 {
		t.Fatalf("only %d stuck re-tries measured", n)
	}
	if math.Abs(pOn-rOn) > 0.05 {
		t.Errorf("with the stuck map: predicted %.3f, realised %.3f: want within 0.05", pOn, rOn)
	}
	if math.Abs(pOff-rOff) <= 0.05 {
		t.Errorf("without the stuck map: predicted %.3f, realised %.3f: the world does not test the map", pOff, rOff)
	}
}

// TestCorrectionsShowTheStuckMap: the corrections a user sees name the stuck map once it has
// measured, and leave it out otherwise.
func TestCorrectionsShowTheStuckMap(t *testing.T) {
	if c := (State{}).Corrections(); c.StuckMap != nil {
		t.Errorf("nothing measured: stuck map %+v", *c.StuckMap)
	}
	tr := &Trend{N: 12.5}
	tr.Beta = [trendDim]float64{0.5, -0.25, 0.125, 0}
	c := State{Dispersion: Dispersion{Stuck: tr}}.Corrections()
	if c.StuckMap == nil || c.StuckMap.Coef != tr.Beta || c.StuckMap.Groups != 12.5 {
		t.Errorf("stuck map shown %+v, want the coefficients %v of 12.5 groups", c.StuckMap, tr.Beta)
	}
}
