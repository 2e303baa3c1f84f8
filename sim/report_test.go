package sim

import (
	"strings"
	"testing"
)

// TestDemoTableHeadlinesBothWeightings: the demo's headline gives the per-environment score
// and, on a line of its own, the per-task one, each from its own curve.
func TestDemoTableHeadlinesBothWeightings(t *testing.T) {
	es, random := newTrace("envsched", 1, 2), newTrace("random", 1, 2)
	es.Score, es.TaskScore = []float64{0.1, 0.2, 0.3}, []float64{0.1, 0.4, 0.6}
	random.Score, random.TaskScore = []float64{0.1, 0.25, 0.22}, []float64{0.1, 0.5, 0.45}
	var b strings.Builder
	if err := WriteDemoTable(&b, es, random, "envsched/1"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\nenvsched at step 2: 0.300; random best in 2 steps: 0.250\n",
		"\nper task: envsched at step 2: 0.600; random best in 2 steps: 0.500\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("demo table lacks %q:\n%s", want, b.String())
		}
	}
}
