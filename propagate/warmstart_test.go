package propagate

import (
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"

	"github.com/envsched/envsched/stats"
)

// stepOn adds a group of 8 rollouts at round to 300 random tasks, as a step of training does.
func stepOn(tasks []stats.Task, round int64, rng *rand.Rand) {
	for range 300 {
		i := rng.IntN(len(tasks))
		var grp stats.Group
		for range 8 {
			tasks[i].Add(float64(rng.IntN(2)), round, round, true, &grp, stats.DefaultDecay)
		}
	}
}

// A fit started from the previous step's solution takes fewer iterations than one from zero,
// ends within the same tolerance relative to the right-hand side, and moves no predicted mean
// by more than a cold fit's own error; the same start gives the same bits whatever the CPUs
// and whatever the Predictor did before.
func TestWarmStartConvergesFasterToTheSameTolerance(t *testing.T) {
	p := DefaultParams()
	p.DriftRate, p.RechosenRate, p.PriorRefit = 0, 0, 0
	g, tasks := benchCatalogue(8000)
	rng := rand.New(rand.NewPCG(5, 6))
	cold, _ := NewPredictor(p)
	mustCall(t, cold, g, tasks, 21)
	ws := cold.WarmStart()
	stepOn(tasks, 22, rng)
	coldPreds := clonePreds(mustCall(t, cold, g, tasks, 22))
	coldIters := cold.FitIterations()
	var ref []Prediction
	for _, procs := range []int{1, 2, 3} {
		old := runtime.GOMAXPROCS(procs)
		warm, _ := NewPredictor(p)
		other, otasks := benchCatalogue(3000)
		mustCall(t, warm, other, otasks, 9) // what it fitted before must not count
		wp, _, err := warm.Predict(g, tasks, 22, State{Warm: ws})
		if err != nil {
			t.Fatal(err)
		}
		got := clonePreds(wp)
		runtime.GOMAXPROCS(old)
		if res := relResidual(&warm.prior, g); res > fitTol {
			t.Fatalf("warm fit ends at relative residual %g, above %g", res, fitTol)
		}
		if warm.FitIterations() >= coldIters {
			t.Errorf("warm fit took %d iterations, cold %d", warm.FitIterations(), coldIters)
		}
		if ref == nil {
			ref = got
			worst := 0.0
			for i := range got {
				worst = max(worst, math.Abs(got[i].Mean-coldPreds[i].Mean))
			}
			if worst > 5e-3 {
				t.Errorf("warm and cold fits differ by up to %g in a predicted mean", worst)
			}
			continue
		}
		if !reflect.DeepEqual(got, ref) {
			t.Fatalf("GOMAXPROCS %d: the same warm start gave other predictions", procs)
		}
	}
}

func TestWarmStartEncoding(t *testing.T) {
	ws := WarmStart{Feat: []int32{0, 3, 70000}, FeatVal: []float32{0.5, -1.25, float32(math.SmallestNonzeroFloat32)},
		Envs: []string{"", "env-a", "ünï"}, EnvVal: []float32{1, 2, -3}, Intercept: -0.75, Rollouts: 1 << 40}
	data, err := ws.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back WarmStart
	if err := back.UnmarshalBinary(data); err != nil || !reflect.DeepEqual(back, ws) {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	var zero WarmStart
	zdata, _ := zero.MarshalBinary()
	if err := back.UnmarshalBinary(zdata); err != nil || len(back.Feat) != 0 || back.Intercept != 0 {
		t.Errorf("zero round trip: %+v, %v", back, err)
	}
	for cut := range len(data) { // every truncation is an error, never a panic or a wrong value
		if err := new(WarmStart).UnmarshalBinary(data[:cut]); err == nil {
			t.Errorf("%d of %d bytes decoded", cut, len(data))
		}
	}
	bad := map[string][]byte{
		"version":        append([]byte{9}, data[1:]...),
		"trailing bytes": append(append([]byte{}, data...), 0),
		"huge count":     {warmStartVersion, 0xff, 0xff, 0xff, 0xff, 0x0f},
	}
	for name, b := range bad {
		if err := new(WarmStart).UnmarshalBinary(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	unsorted := WarmStart{Feat: []int32{3, 3}, FeatVal: []float32{1, 2}}
	if _, err := unsorted.MarshalBinary(); err == nil {
		t.Error("repeated feature ids encoded")
	}
}
