package sim

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// TestBimodalRandomWastesLikeAgentBenchmarks: in the bimodal world random choice wastes 55-65%
// of its groups from the start and over the run (the default world: about 40%), because most
// tasks are nearly always or nearly never solved.
func TestBimodalRandomWastesLikeAgentBenchmarks(t *testing.T) {
	sc, err := ScenarioByName("bimodal")
	if err != nil {
		t.Fatal(err)
	}
	cfg := shortConfig(120, "random")
	cfg.Scenario, cfg.Seeds = sc, 3
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Summary.Policies[0]
	for name, share := range map[string]float64{"whole run": p.Degenerate.Median, "steps 1-10": p.Degenerate10.Median} {
		if share < 0.55 || share > 0.65 {
			t.Errorf("%s: random wastes %.1f%% of its groups, want 55%% to 65%%", name, 100*share)
		}
	}
	def, bi := NewWorld(DefaultScenario(), 5), NewWorld(sc, 5)
	if extremes(bi) < 0.5 || extremes(def) > 0.45 {
		t.Errorf("tasks below 0.05 or above 0.95 at the start: bimodal %.2f, default %.2f", extremes(bi), extremes(def))
	}
}

// extremes is the share of w's training tasks that a fresh learner nearly never or nearly
// always solves.
func extremes(w *World) float64 {
	l := NewLearner(w)
	n := 0
	for t := range w.Tasks {
		if p := l.P(t); p < 0.05 || p > 0.95 {
			n++
		}
	}
	return float64(n) / float64(len(w.Tasks))
}

// realCatalog returns the path of the real catalogue, skipping the test when it is absent (CI
// has no ../shared).
func realCatalog(t *testing.T) string {
	t.Helper()
	path := filepath.Join("..", DefaultRealCatalog)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("real catalogue absent (%v)", err)
	}
	return path
}

func TestRealCatalogWorld(t *testing.T) {
	sc, err := RealCatalogScenario(realCatalog(t))
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := NewWorld(sc, 42), NewWorld(sc, 42), NewWorld(sc, 43)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two worlds of the same seed differ")
	}
	if reflect.DeepEqual(a.HeldOut, c.HeldOut) {
		t.Fatal("worlds of different seeds hold out the same tasks")
	}
	if len(a.Envs) != 41 || len(a.Tasks)+len(a.HeldOut) != len(sc.Real) {
		t.Fatalf("%d environments, %d + %d tasks, want 41 and %d in all", len(a.Envs), len(a.Tasks), len(a.HeldOut), len(sc.Real))
	}
	for e, held := range a.EnvHeld {
		if len(held) < 2 || len(held) > sc.HeldOutPerEnv || len(a.EnvTasks[e]) == 0 {
			t.Errorf("%s: %d held out, %d to train on", a.Envs[e], len(held), len(a.EnvTasks[e]))
		}
	}
	// tasks alike by their real tools share skills: the two tau-bench retail tasks that
	// both exchange delivered items share a skill besides their environment's
	var exch []int
	for i, tk := range a.Tasks {
		if tk.Record.Env == "tau-retail" && slices.Contains(tk.Record.Tools, "exchange_delivered_order_items") {
			exch = append(exch, i)
		}
	}
	if len(exch) < 2 {
		t.Fatalf("%d tau-retail tasks exchange items", len(exch))
	}
	x, y := a.Tasks[exch[0]].Needs, a.Tasks[exch[1]].Needs
	shared := 0
	for _, s := range x {
		if slices.Contains(y, s) {
			shared++
		}
	}
	if shared < 2 {
		t.Errorf("two tasks with the same tool need %v and %v: want a skill in common besides the environment's", x, y)
	}
	if ex := extremes(a); ex < 0.4 {
		t.Errorf("%.2f of the tasks nearly never or nearly always solved at the start, want most (agent benchmarks)", ex)
	}
}

func TestRealCatalogAbsent(t *testing.T) {
	_, err := ScenarioFor("real-catalog", filepath.Join(t.TempDir(), "none.jsonl"))
	if !errors.Is(err, ErrNoRealCatalog) {
		t.Fatalf("absent file: %v, want ErrNoRealCatalog", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"env":"a","task_id":"1","text":"x"}`+"\n{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := RealCatalogScenario(bad); err == nil {
		t.Error("a line that is not JSON read without an error")
	}
}

// TestCalibrationCountsEveryGroup: every group of envsched's runs is counted in one channel,
// and the predicted sums are chances.
func TestCalibrationCountsEveryGroup(t *testing.T) {
	res, err := Run(context.Background(), shortConfig(15, "envsched", "random"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Traces["envsched"] {
		var groups, deg int64
		for ph := range tr.Calib {
			for ch, c := range tr.Calib[ph] {
				if ph == phaseFirst { // step 1 again, counted in phase 0: a subset
					if c.Groups > tr.Calib[0][ch].Groups || c.Predicted < 0 || c.Predicted > float64(c.Groups) {
						t.Errorf("first request, channel %v: %+v of phase 0's %+v", Channel(ch), c, tr.Calib[0][ch])
					}
					continue
				}
				groups += c.Groups
				deg += c.Degenerate
				if c.Predicted < 0 || c.Predicted > float64(c.Groups) || (ch == int(ChannelRandom) && c.Groups == 0) {
					t.Errorf("phase %d channel %v: %+v", ph, Channel(ch), c)
				}
			}
		}
		if groups != tr.Groups[15] || deg != tr.DegGroups[15] {
			t.Errorf("seed %d: calibration counts %d groups (%d degenerate), the run %d (%d)", tr.Seed, groups, deg, tr.Groups[15], tr.DegGroups[15])
		}
		early := tr.Calib[0][ChannelNew].Groups + tr.Calib[0][ChannelRechosen].Groups + tr.Calib[0][ChannelRandom].Groups
		if early != tr.Groups[earlySteps] {
			t.Errorf("seed %d: %d groups in steps 1-10, the run %d", tr.Seed, early, tr.Groups[earlySteps])
		}
		first := tr.Calib[phaseFirst][ChannelNew].Groups + tr.Calib[phaseFirst][ChannelRechosen].Groups + tr.Calib[phaseFirst][ChannelRandom].Groups
		if first != tr.Groups[1] || tr.Calib[phaseFirst][ChannelRechosen].Groups != 0 {
			t.Errorf("seed %d: %d groups in the first request (%d re-chosen), the run %d", tr.Seed, first, tr.Calib[phaseFirst][ChannelRechosen].Groups, tr.Groups[1])
		}
	}
	if res.Traces["random"][0].Calib != nil {
		t.Error("random predicts nothing, yet has a calibration")
	}
	if len(res.Summary.Calibration) != 1 || res.Summary.Calibration[0].Policy != "envsched" {
		t.Errorf("summary calibration %+v", res.Summary.Calibration)
	}
}
