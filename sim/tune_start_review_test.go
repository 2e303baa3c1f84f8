//go:build analysis

package sim

import (
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/stats"
)

// TestAnalysisTuneStartKeyMovesTheStart: the tuning harness's key "start" (its own doc's
// example: TUNE='base:;start:start=0.5') sets DispersionStart, which the start no longer
// reads while StartDegenerate is above 0 (the default, ½): every "start" variant is the
// reference, silently. A key must move what it names, or the harness should refuse it.
func TestAnalysisTuneStartKeyMovesTheStart(t *testing.T) {
	vs := parseVariants(t, "low:start=0.2;high:start=2")
	g := graph.New([]string{"e"}, []graph.Node{{Env: 0, Task: "a"}}, [][]graph.Edge{nil})
	var pdeg [2]float64
	for i, v := range vs {
		p := v.params.Predict
		p.GroupSize = 8
		preds, err := propagate.Predict(g, make([]stats.Task, 1), 1, p)
		if err != nil {
			t.Fatal(err)
		}
		pdeg[i] = preds[0].PDeg
	}
	if pdeg[0] == pdeg[1] {
		t.Errorf("start=0.2 and start=2 predict the first request alike (p_degenerate %.4f): the key sets nothing the start reads", pdeg[0])
	}
}
