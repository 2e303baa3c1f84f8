package propagate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

// newExtremeWorld is one environment of 300 tasks: half nearly always or nearly never solved
// (a success chance of 0.04 or 0.96: most of their groups all-equal, some not), the others
// learnable, with a chance between 0.2 and 0.8; none moves.
func newExtremeWorld() *stuckWorld {
	const n = 300
	w := &stuckWorld{tasks: make([]stats.Task, n), p: make([]float64, n), rng: rand.New(rand.NewPCG(11, 5))}
	nodes := make([]graph.Node, n)
	for i := range n {
		nodes[i] = graph.Node{Env: 0, Task: fmt.Sprintf("t%03d", i)}
		switch {
		case i%4 == 0:
			w.p[i] = 0.04
		case i%4 == 1:
			w.p[i] = 0.96
		default:
			w.p[i] = 0.2 + 0.6*math.Mod(float64(i)*0.618034, 1)
		}
	}
	w.g = graph.New([]string{"e"}, nodes, nil)
	return w
}

// extremeOwn reports whether a task's own pooled reward is at most 0.15 or at least 0.85
// over two or more groups (stuck or not: the stuck channel is off): what the acceptance
// harness's own veto reads.
func extremeOwn(t *stats.Task) bool {
	if t.Groups < 2 {
		return false
	}
	m := t.Sum / float64(t.Rollouts)
	return m <= 0.15 || m >= 0.85
}

// extremeCalibration plays the world for 160 rounds after three groups of every task: each
// round it re-tries the next 8 of the tasks whose own mean is extreme (extremeOwn) and the
// next 8 of the others, in turn whatever their predictions, and returns, over rounds 24 on,
// the mean chance of an all-equal group that the answer gives the extreme re-tries and the
// share of them that came back all-equal.
func extremeCalibration(t *testing.T, p Params) (predicted, realised float64, n int) {
	t.Helper()
	w := newExtremeWorld()
	pr, err := NewPredictor(p)
	if err != nil {
		t.Fatal(err)
	}
	for r := int64(1); r <= 3; r++ {
		for i := range w.tasks {
			w.group(i, r)
		}
	}
	var st State
	nextExt, nextOther := 0, 0
	pick := func(ext bool, from *int, k int) []int {
		var out []int
		for range len(w.tasks) {
			if len(out) == k {
				break
			}
			i := *from % len(w.tasks)
			*from++
			if extremeOwn(&w.tasks[i]) == ext {
				out = append(out, i)
			}
		}
		return out
	}
	var sumPred, sumReal float64
	for round := int64(4); round <= 163; round++ {
		preds, next, err := pr.Predict(w.g, w.tasks, round, st)
		if err != nil {
			t.Fatal(err)
		}
		ext := pick(true, &nextExt, 8)

		chosen := append(append([]int(nil), ext...), pick(false, &nextOther, 8)...)
		next.Baseline = Baselines(w.g, w.tasks, preds, chosen)
		st = next
		answer := pr.Picker(st)
		var pdeg []float64
		for _, i := range ext {
			pdeg = append(pdeg, answer(preds[i], true, false).PDegenerate(8))
		}
		for k, i := range chosen {
			deg := w.group(i, round)
			if k < len(ext) && round >= 24 {
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

// TestExtremeRetriesAreCalibrated (Params.DispersionExtreme): in a world where half the tasks
// are nearly always or nearly never solved, the re-tries of tasks whose own groups show them
// so are predicted within 0.05 of the share that comes back all-equal with the extreme map;
// without it they are not.
func TestExtremeRetriesAreCalibrated(t *testing.T) {
	on := DefaultParams()
	on.DispersionExtreme = true
	off := on
	off.DispersionExtreme = false
	pOn, rOn, n := extremeCalibration(t, on)
	pOff, rOff, _ := extremeCalibration(t, off)
	t.Logf("extreme re-tries (%d): with the map predicted %.3f, realised %.3f; without %.3f, %.3f", n, pOn, rOn, pOff, rOff)
	if n < 300 {
		t.Fatalf("only %d extreme re-tries measured", n)
	}
	if math.Abs(pOn-rOn) > 0.05 {
		t.Errorf("with the extreme map: predicted %.3f, realised %.3f: want within 0.05", pOn, rOn)
	}
	if math.Abs(pOff-rOff) <= 0.05 {
		t.Errorf("without the extreme map: predicted %.3f, realised %.3f: the world does not test the map", pOff, rOff)
	}
}

// TestCorrectionsShowTheExtremeMap: the corrections a user sees name the extreme map once it
// has measured, and leave it out otherwise.
func TestCorrectionsShowTheExtremeMap(t *testing.T) {
	if c := (State{}).Corrections(); c.ExtremeMap != nil {
		t.Errorf("nothing measured: extreme map %+v", *c.ExtremeMap)
	}
	tr := &Trend{N: 7.5}
	tr.Beta = [trendDim]float64{0.5, -0.25, 0.125, 0.0625}
	c := State{Dispersion: Dispersion{Extreme: tr}}.Corrections()
	if c.ExtremeMap == nil || c.ExtremeMap.Coef != tr.Beta || c.ExtremeMap.Groups != 7.5 {
		t.Errorf("extreme map shown %+v, want the coefficients %v of 7.5 groups", c.ExtremeMap, tr.Beta)
	}
}

// TestDispersionVersion9OnlyWithAnExtremeMap (Params.DispersionExtreme): a Dispersion with an
// extreme map is written as version 9 and decodes back to itself and to what its JSON decodes
// to, the never-tried factor's pending groups answered with the start or not; without the map
// it is written in the bytes of the build before (the version its other parts ask for).
func TestDispersionVersion9OnlyWithAnExtremeMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 21))
	for i := range 300 {
		d := randomDispersion(rng)
		if rng.IntN(2) == 0 {
			d.NewFactor, d.NewPending = 0.5+rng.Float64(), []MatchGroup{{Mean: 0.3, Count: 2, N: 8, K: 1, Start: rng.IntN(2) == 0}}
		}
		if rng.IntN(2) == 0 {
			d.Stuck = &Trend{N: 2, Beta: [trendDim]float64{0.3, -0.2}}
		}
		without, err := d.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		with := d
		with.Extreme = &Trend{N: rng.Float64() * 50, Beta: [trendDim]float64{rng.NormFloat64(), rng.NormFloat64(), 0.5, -0.25}}
		with.Extreme.Info[0], with.Extreme.Info[5] = rng.Float64(), rng.Float64()
		got := versionedRoundTrip(t, i, with, without, dispersionVersion9, "the extreme map")
		if got.Extreme == nil || *got.Extreme != *with.Extreme {
			t.Fatalf("draw %d: extreme map %+v, want %+v", i, got.Extreme, with.Extreme)
		}
		var old Dispersion
		if err := old.UnmarshalBinary(without); err != nil || old.Extreme != nil {
			t.Fatalf("draw %d: without the map: %v, extreme map %+v", i, err, old.Extreme)
		}
	}
}
