package acceptance

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/envsched/envsched/internal/testbin"
)

// smoke is the harness's --smoke setting: steps, batch size, group size (harness.py, parse_args).
const (
	smokeSteps = 6
	smokeBatch = 8
	smokeGroup = 4
)

// summary is the part of the harness's --json-out that the tests read.
type summary struct {
	Worlds map[string]world `json:"worlds"`
}

type world struct {
	Headline   map[string]headline  `json:"headline"`
	ByChannel  []calibrationRow     `json:"by_channel"`
	ByReason   []calibrationRow     `json:"by_reason"`
	Ledger     []ledger             `json:"ledger"`
	Violations []string             `json:"violations"`
	Reasons    []string             `json:"reason_problems"`
	Curves     map[string][]float64 `json:"curves"`
}

type headline struct {
	Seeds     int      `json:"seeds"`
	AtStep    float64  `json:"at_step"`
	Best      float64  `json:"best"`
	Beats     *int     `json:"beats_random_best"`
	Reach     *float64 `json:"reach_random_best"`
	Degen     float64  `json:"degenerate"`
	DegenEarl float64  `json:"degenerate_early"`
}

type calibrationRow struct {
	Phase   string  `json:"phase"`
	Channel string  `json:"channel"`
	Reason  string  `json:"reason"`
	Picks   int     `json:"picks"`
	Share   float64 `json:"share"`
}

type ledger struct {
	RolloutsWritten int64                   `json:"rollouts_written"`
	StatusRollouts  int64                   `json:"status_rollouts"`
	Duplicates      int64                   `json:"duplicates"`
	Quarantined     int64                   `json:"quarantined"`
	Groups          int64                   `json:"groups"`
	StatusGroups    int64                   `json:"status_groups"`
	Realised        float64                 `json:"realised_degenerate"`
	StatusRealised  float64                 `json:"status_realised_degenerate"`
	Predicted       float64                 `json:"predicted_degenerate"`
	StatusPredicted float64                 `json:"status_predicted_degenerate"`
	Channels        map[string]channelCount `json:"channels"`
}

type channelCount struct {
	Groups         int64   `json:"groups"`
	StatusGroups   int64   `json:"status_groups"`
	Realised       float64 `json:"realised_degenerate"`
	StatusRealised float64 `json:"status_realised_degenerate"`
}

func here(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

func needPython(t *testing.T) string {
	t.Helper()
	return testbin.Python(t, "the acceptance harness's tests")
}

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Remove()
	os.Exit(code)
}

// catalogue is the real catalogue when ../shared has it, else a small one of the same layout
// (4 environments of 30 tasks, tools and text varied) written into the test's folder.
func catalogue(t *testing.T) string {
	t.Helper()
	real := filepath.Join(here(t), "..", "..", "..", "shared", "data", "catalog-real.jsonl")
	if _, err := os.Stat(real); err == nil {
		return real
	}
	path := filepath.Join(t.TempDir(), "catalog.jsonl")
	var b strings.Builder
	verbs := []string{"get", "cancel", "book", "search", "update", "send", "calculate"}
	for e := range 4 {
		for i := range 30 {
			tools := []string{}
			for k := range 1 + (i*7+e)%4 {
				tools = append(tools, fmt.Sprintf("%s_item_%d", verbs[(i+k+e)%len(verbs)], k))
			}
			sort.Strings(tools)
			text := strings.Repeat(fmt.Sprintf("user: please do thing %d of kind %d. ", i, e), 1+i%5)
			line, _ := json.Marshal(map[string]any{"env": fmt.Sprintf("bench%d-cat%d", e%2, e), "task_id": fmt.Sprint(i),
				"text": text, "tools": tools, "source": fmt.Sprintf("bench%d", e%2)})
			b.Write(append(line, '\n'))
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runHarness runs harness.py --smoke with args and returns its summary and table.
func runHarness(t *testing.T, py, bin, cat string, args ...string) (summary, string) {
	t.Helper()
	return runHarnessEnv(t, nil, py, bin, cat, args...)
}

// runHarnessEnv is runHarness with extra environment variables.
func runHarnessEnv(t *testing.T, env []string, py, bin, cat string, args ...string) (summary, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "summary.json")
	argv := append([]string{filepath.Join(here(t), "harness.py"), "--smoke", "--seeds", "1", "--bin", bin,
		"--catalog", cat, "--json-out", out}, args...)
	cmd := exec.Command(py, argv...)
	cmd.Env = append(append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1"), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("harness: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var s summary
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("summary: %v", err)
	}
	return s, stdout.String()
}

// TestSmokeAgainstDaemon: the harness drives the real daemon through a few steps in every world;
// every batch is honoured, every rollout and group is counted once by the daemon, and the daemon's
// calibration ledger agrees with what the harness measured.
func TestSmokeAgainstDaemon(t *testing.T) {
	py := needPython(t)
	s, table := runHarness(t, py, testbin.Envsched(t), catalogue(t))
	if len(s.Worlds) != 9 {
		t.Fatalf("worlds in the summary: %d, want 9 (sharp, chain, tools, agentic, plateau, giants, lookalike, unlock, seesaw)", len(s.Worlds))
	}
	for name, w := range s.Worlds {
		t.Run(name, func(t *testing.T) {
			if len(w.Violations) != 0 {
				t.Errorf("protocol violations: %v", w.Violations)
			}
			if len(w.Reasons) != 0 {
				t.Errorf("reasons the trainer's history contradicts: %v", w.Reasons)
			}
			checkLedger(t, w.Ledger)
			checkCalibrationShares(t, w.ByChannel, func(r calibrationRow) string { return r.Channel })
			checkCalibrationShares(t, w.ByReason, func(r calibrationRow) string { return r.Reason })
			checkHeadline(t, w)
		})
	}
	if !strings.Contains(table, "world sharp") || !strings.Contains(table, "world plateau") {
		t.Errorf("table names no world:\n%s", table)
	}
}

func checkLedger(t *testing.T, ls []ledger) {
	t.Helper()
	if len(ls) != 1 {
		t.Fatalf("daemon runs: %d, want 1", len(ls))
	}
	l := ls[0]
	want := int64(smokeSteps * smokeBatch * smokeGroup)
	if l.RolloutsWritten != want || l.StatusRollouts != want {
		t.Errorf("rollouts written %d, counted by the daemon %d; want %d both", l.RolloutsWritten, l.StatusRollouts, want)
	}
	if l.Duplicates != 0 || l.Quarantined != 0 {
		t.Errorf("duplicates %d, quarantined %d; want 0", l.Duplicates, l.Quarantined)
	}
	if g := int64(smokeSteps * smokeBatch); l.Groups != g || l.StatusGroups != g {
		t.Errorf("groups measured: harness %d, daemon %d; want %d", l.Groups, l.StatusGroups, g)
	}
	if !near(l.Realised, l.StatusRealised) || !near(l.Predicted, l.StatusPredicted) {
		t.Errorf("degenerate share realised %v / predicted %v by the harness, %v / %v by the daemon",
			l.Realised, l.Predicted, l.StatusRealised, l.StatusPredicted)
	}
	for name, c := range l.Channels {
		if c.Groups != c.StatusGroups || !near(c.Realised, c.StatusRealised) {
			t.Errorf("channel %s: harness %d groups (%v degenerate), daemon %d (%v)", name, c.Groups, c.Realised,
				c.StatusGroups, c.StatusRealised)
		}
	}
}

// near compares shares the daemon rounds to 4 decimals.
func near(a, b float64) bool { return math.Abs(a-b) < 1e-4+1e-9 }

// checkCalibrationShares: per phase, the picks split by key sum to every pick and the shares to 1.
func checkCalibrationShares(t *testing.T, rows []calibrationRow, key func(calibrationRow) string) {
	t.Helper()
	picks, shares := map[string]int{}, map[string]float64{}
	for _, r := range rows {
		if key(r) == "" {
			t.Errorf("row without a name: %+v", r)
		}
		picks[r.Phase] += r.Picks
		shares[r.Phase] += r.Share
	}
	if picks["all"] != smokeSteps*smokeBatch || picks["1-10"] != smokeSteps*smokeBatch {
		t.Errorf("picks per phase %v, want %d in all and in 1-10", picks, smokeSteps*smokeBatch)
	}
	for phase, s := range shares {
		if math.Abs(s-1) > 1e-9 {
			t.Errorf("phase %s: shares sum to %v", phase, s)
		}
	}
}

// checkHeadline recomputes the headline figures from the curves the summary carries.
func checkHeadline(t *testing.T, w world) {
	t.Helper()
	randomBest := maxAfterStart(w.Curves["random/1"])
	for policy, h := range w.Headline {
		c := w.Curves[policy+"/1"]
		if len(c) != smokeSteps+1 {
			t.Fatalf("%s: curve of %d points, want %d", policy, len(c), smokeSteps+1)
		}
		if !near(h.AtStep, c[smokeSteps]) || !near(h.Best, maxAfterStart(c)) {
			t.Errorf("%s: headline at step %v best %v, curve says %v and %v", policy, h.AtStep, h.Best, c[smokeSteps], maxAfterStart(c))
		}
		beats := 0
		if c[smokeSteps] > randomBest {
			beats = 1
		}
		if h.Beats == nil || *h.Beats != beats {
			t.Errorf("%s: beats random's best %v, curve says %d", policy, h.Beats, beats)
		}
		if h.Degen < 0 || h.Degen > 1 || h.Degen != h.DegenEarl {
			t.Errorf("%s: degenerate shares %v and %v (the smoke run is all early steps)", policy, h.Degen, h.DegenEarl)
		}
	}
}

func maxAfterStart(c []float64) float64 {
	m := math.Inf(-1)
	for _, v := range c[1:] {
		m = math.Max(m, v)
	}
	return m
}

// TestSameAnswersAfterCrash: the daemon answers the same request the same way, so a run of one
// seed whose daemon is killed with SIGKILL before step 5's request (and started again) trains the
// same curve as a run against a daemon that kept running, and counts every rollout once.
func TestSameAnswersAfterCrash(t *testing.T) {
	py := needPython(t)
	bin, cat := testbin.Envsched(t), catalogue(t)
	args := []string{"--world", "sharp", "--policies", "envsched", "--steps", "10"}
	a, _ := runHarness(t, py, bin, cat, args...)
	b, _ := runHarness(t, py, bin, cat, append(args, "--crash-at", "5")...)
	ca, cb := a.Worlds["sharp"].Curves["envsched/1"], b.Worlds["sharp"].Curves["envsched/1"]
	if len(ca) != 11 || fmt.Sprint(ca) != fmt.Sprint(cb) {
		t.Errorf("seed 1 without and with a crash: %v and %v", ca, cb)
	}
	for _, s := range []summary{a, b} {
		w := s.Worlds["sharp"]
		if len(w.Violations) != 0 || len(w.Ledger) != 1 || w.Ledger[0].StatusRollouts != 10*smokeBatch*smokeGroup {
			t.Errorf("violations %v, ledger %+v", w.Violations, w.Ledger)
		}
	}
}

// TestDaemonDefaultsOnly: the daemon runs with its defaults whatever ENVSCHED_* variables the
// harness's environment holds, and a --daemon-flag does reach it.
func TestDaemonDefaultsOnly(t *testing.T) {
	py := needPython(t)
	bin, cat := testbin.Envsched(t), catalogue(t)
	args := []string{"--world", "sharp", "--policies", "envsched"}
	curve := func(s summary) string { return fmt.Sprint(s.Worlds["sharp"].Curves["envsched/1"]) }
	plain, _ := runHarness(t, py, bin, cat, args...)
	env, _ := runHarnessEnv(t, []string{"ENVSCHED_KAPPA=0.3", "ENVSCHED_COVERAGE_WEIGHT=0.9"}, py, bin, cat, args...)
	flagged, table := runHarness(t, py, bin, cat, append(args, "--daemon-flag=--kappa=0.3", "--daemon-flag=--coverage-weight=0.9")...)
	if curve(env) != curve(plain) {
		t.Errorf("ENVSCHED_* variables reached the daemon: %s against %s", curve(env), curve(plain))
	}
	if curve(flagged) == curve(plain) {
		t.Errorf("--daemon-flag changed nothing: %s", curve(flagged))
	}
	if !strings.Contains(table, "envsched run flags: --kappa=0.3 --coverage-weight=0.9") {
		t.Errorf("the table does not name the flags:\n%s", table)
	}
}

// TestPythonUnits runs the harness's own unit tests (figures from hand-made runs, worlds).
func TestPythonUnits(t *testing.T) {
	py := needPython(t)
	cmd := exec.Command(py, "-m", "unittest", "discover", "-s", here(t), "-p", "test_*.py", "-v")
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python unit tests: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "OK") {
		t.Errorf("no OK from unittest:\n%s", out)
	}
}

// TestSkipsWithoutCatalogue: without the catalogue the harness runs nothing and says so (exit 4).
func TestSkipsWithoutCatalogue(t *testing.T) {
	py := needPython(t)
	cmd := exec.Command(py, filepath.Join(here(t), "harness.py"), "--smoke", "--catalog",
		filepath.Join(t.TempDir(), "absent.jsonl"), "--policies", "random")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 4 || !strings.Contains(string(out), "SKIP") {
		t.Errorf("harness without a catalogue: %v\n%s", err, out)
	}
}
