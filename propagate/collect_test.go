package propagate

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/graph/graphtest"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/stats"
)

// TestPredictCollectsTheRowsOfTheScan: the rows of the fit that Predict collects in its pass
// over the tasks' statistics (ownEvidence) are those of a scan of its own evidence
// (chooseRowsBySort), over several pieces and a ragged end, with more rows than the fit keeps,
// tasks with rollouts but no evidence left, and evidence without rollouts; three calls in a
// row, the rounds moving, so that a piece left from an earlier call would show. It fails when
// a piece is collected before its evidence is written or is not collected at all.
func TestPredictCollectsTheRowsOfTheScan(t *testing.T) {
	const n = 3*chunk + 77
	g := graphtest.Random(n, 6, 3, 8)
	rng := rand.New(rand.NewPCG(8, 3))
	cat := make([]record.Task, n)
	for i := range cat {
		words := make([]string, 2+rng.IntN(6))
		for k := range words {
			words[k] = fmt.Sprintf("w%d", rng.IntN(500))
		}
		cat[i] = record.Task{Text: strings.Join(words, " ")}
	}
	g = g.WithFeatures(graph.TextFeatures(cat))
	tasks := make([]stats.Task, n)
	for i := range tasks {
		switch k := rng.IntN(10); {
		case k < 6:
			tasks[i] = stats.Task{Rollouts: 8, A: float64(rng.IntN(9)), B: float64(1 + rng.IntN(3)), Round: int64(1 + rng.IntN(60))}
		case k == 6: // rollouts, no evidence
			tasks[i] = stats.Task{Rollouts: 8, Round: int64(1 + rng.IntN(60))}
		case k == 7: // evidence, no rollouts: not a row
			tasks[i] = stats.Task{A: 3, B: 2, Round: 5}
		}
	}
	pr, err := NewPredictor(DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	for _, round := range []int64{40, 61, 62} {
		if _, _, err := pr.Predict(g, tasks, round, State{}); err != nil {
			t.Fatal(err)
		}
		want := chooseRowsBySort(g, tasks, pr.own)
		if len(want) != fitRows {
			t.Fatalf("round %d: %d rows: the case does not cut", round, len(want))
		}
		if !slices.Equal(pr.prior.rows, want) {
			t.Fatalf("round %d: %d rows, the scan's %d, or others", round, len(pr.prior.rows), len(want))
		}
		for k := range n / 3 { // the next call sees other statistics
			tasks[rng.IntN(n)].Round = round + int64(k%2)
		}
	}
}
