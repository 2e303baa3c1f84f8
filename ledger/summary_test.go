package ledger

import (
	"encoding/json"
	"math"
	"testing"
)

// cell makes a cell of groups groups of size 8, deg of them all-equal.
func cell(groups, deg int64, pred float64) Cell {
	return Cell{Groups: groups, Degenerate: deg, PredDegenerate: pred * float64(groups), Rollouts: 8 * groups}
}

func TestSummarizeSavings(t *testing.T) {
	envs := []EnvMean{{Tasks: 10, Rollouts: 80, Mean: 0.5}, {Tasks: 30, Rollouts: 0, Mean: 0}}
	// with 0/1 rewards of mean 0.5 and G = 8: 2 × 0.5^8 = 0.0078125
	envShare := 2 * math.Pow(0.5, 8)
	for _, tc := range []struct {
		name   string
		cells  [NumChannels]Cell
		envs   []EnvMean
		source string
		random float64
		saved  float64
	}{
		{"nothing measured", [NumChannels]Cell{}, envs, "none", 0, 0},
		// 40 groups, 10 all-equal: 30 informative; random slots 40 groups, 20 all-equal (0.5):
		// random needs 30 × 8 / 0.5 = 480 rollouts; the answers spent (40 + 40) × 8 = 640
		{"random slots", [NumChannels]Cell{cell(40, 10, 0.2), {}, cell(40, 20, 0.4)}, envs, "random_slots", 0.5,
			float64(30+20)*8/0.5 - 640},
		{"too few random slots: env means", [NumChannels]Cell{cell(40, 10, 0.2), {}, cell(5, 5, 0.4)}, envs, "env_means",
			math.Round(envShare*1e4) / 1e4, math.Round(float64(30)*8/(1-math.Round(envShare*1e4)/1e4) - 360)},
		{"no rollouts anywhere: no estimate", [NumChannels]Cell{cell(4, 1, 0.2)}, []EnvMean{{Tasks: 3}}, "none", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := Ledger{Cells: map[string]*[NumChannels]Cell{"e": &tc.cells}}
			s := Summarize(l, tc.envs)
			sv := s.Savings
			if sv.Source != tc.source || sv.RandomDegenerate != tc.random || sv.RolloutsSaved != tc.saved {
				t.Errorf("savings %+v; want source %s, random share %v, saved %v", sv, tc.source, tc.random, tc.saved)
			}
			total := l.Total()
			if s.Overall.Groups != total.Groups || sv.WastedRollouts != 8*total.Degenerate {
				t.Errorf("summary %+v; want %d groups and %d wasted rollouts", s, total.Groups, 8*total.Degenerate)
			}
		})
	}
}

func TestWindowOf(t *testing.T) {
	w := WindowOf(Cell{Groups: 3, Degenerate: 2, PredDegenerate: 0.5, PredMean: 1.5, RealMean: 1})
	want := Window{Groups: 3, PredictedDegenerate: 0.1667, RealisedDegenerate: 0.6667, DegenerateGap: 0.5,
		PredictedMean: 0.5, RealisedMean: 0.3333}
	if w != want {
		t.Errorf("window %+v; want %+v", w, want)
	}
	if (WindowOf(Cell{}) != Window{}) {
		t.Error("an empty cell shows numbers")
	}
}

// TestSummaryAlwaysEncodes: whatever the ledger holds (nothing yet, groups without rollouts,
// every group degenerate, random slots alone, environments with no rollouts or every reward
// equal), the summary has no NaN or infinity: status.json and stats --json are encoded from it,
// and encoding/json refuses both (status.json would not be written).
func TestSummaryAlwaysEncodes(t *testing.T) {
	for name, c := range map[string]struct {
		cells [NumChannels]Cell
		envs  []EnvMean
	}{
		"empty":                {},
		"groups, no rollouts":  {[NumChannels]Cell{{Groups: 3}}, nil},
		"all degenerate":       {[NumChannels]Cell{cell(40, 40, 1), {}, cell(40, 40, 1)}, nil},
		"random slots only":    {[NumChannels]Cell{{}, {}, cell(50, 0, 0)}, nil},
		"env means 0 and 1":    {[NumChannels]Cell{cell(10, 10, 1)}, []EnvMean{{Tasks: 5, Rollouts: 40, Mean: 1}, {Tasks: 5, Rollouts: 40}}},
		"env without rollouts": {[NumChannels]Cell{cell(10, 0, 0)}, []EnvMean{{Tasks: 100000}}},
		"huge counts":          {[NumChannels]Cell{{Groups: 1 << 50, Degenerate: 1 << 49, PredDegenerate: 1 << 49, Rollouts: 1 << 53}}, nil},
	} {
		l := Ledger{Cells: map[string]*[NumChannels]Cell{"e": &c.cells}}
		if _, err := json.Marshal(Summarize(l, c.envs)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := json.Marshal(Summarize(Ledger{}, nil)); err != nil {
		t.Errorf("a zero ledger: %v", err)
	}
}
