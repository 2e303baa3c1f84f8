package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runCLI runs the command line in process and returns the exit code, standard output and
// standard error.
func runCLI(args ...string) (int, string, string) {
	var out, errw bytes.Buffer
	app := NewApp()
	app.Writer, app.ErrWriter = &out, &errw
	if err := app.Run(append([]string{"envsched"}, args...)); err != nil {
		return ExitCode(err), out.String(), errw.String() + err.Error()
	}
	return exitOK, out.String(), errw.String()
}

func TestDemoDrivesTheRealDaemon(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "exchange")
	code, out, errs := runCLI("demo", "--steps", "12", "--out", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !regexp.MustCompile(`envsched at step 12: 0\.\d{3}; random best in 12 steps: 0\.\d{3}`).MatchString(out) {
		t.Fatalf("no headline in:\n%s", out)
	}
	if !regexp.MustCompile(`\nper task: envsched at step 12: 0\.\d{3}; random best in 12 steps: 0\.\d{3}\n`).MatchString(out) {
		t.Fatalf("no per-task headline in:\n%s", out)
	}
	for _, want := range []string{"envsched (envsched/1)", "random", "step 10", "step 12", "degenerate groups", "rollouts", "6144"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	batches, _ := filepath.Glob(filepath.Join(dir, "batches", "step-*.json"))
	if len(batches) != 12 {
		t.Fatalf("%d batch files, want 12: the demo must go through the daemon", len(batches))
	}
	var b struct {
		Policy string
		Tasks  []struct{ Env, TaskID string }
	}
	data, err := os.ReadFile(filepath.Join(dir, "batches", "step-000012.json"))
	if err != nil || json.Unmarshal(data, &b) != nil || len(b.Tasks) != 64 || b.Policy == "" {
		t.Fatalf("last batch file: %v %q", err, data)
	}
	lines, err := os.ReadFile(filepath.Join(dir, "rollouts", "trainer.jsonl"))
	if err != nil || bytes.Count(lines, []byte("\n")) != 12*64*8 {
		t.Fatalf("rollout file has %d lines, want %d: %v", bytes.Count(lines, []byte("\n")), 12*64*8, err)
	}
}

func TestSimCommandTableAndJSON(t *testing.T) {
	out := t.TempDir()
	code, table, errs := runCLI("sim", "--policies", "envsched,random,oracle", "--seeds", "2", "--steps", "40", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"@40", "envsched", "oracle", "envsched at step 40:", "random best in 40 steps"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	for _, want := range []string{"seed 1 done", "seed 2 done", "(1/2 seeds)", "(2/2 seeds)"} {
		if !strings.Contains(errs, want) {
			t.Errorf("standard error (not a terminal) lacks the per-seed line %q:\n%s", want, errs)
		}
	}
	for _, png := range []string{"heldout_by_step.png", "heldout_by_rollouts.png", "degenerate_by_step.png"} {
		if fi, err := os.Stat(filepath.Join(out, png)); err != nil || fi.Size() == 0 {
			t.Errorf("plot %s: %v", png, err)
		}
	}
	code, js, errs := runCLI("sim", "--policies", "random", "--seeds", "1", "--steps", "5", "--out", "", "--json")
	var v map[string]any
	if code != exitOK || json.Unmarshal([]byte(js), &v) != nil || v["summary"] == nil {
		t.Fatalf("--json: exit %d, %s\n%s", code, errs, js)
	}
	if code, _, _ := runCLI("sim", "--policies", "nope"); code != exitUsage {
		t.Fatalf("unknown policy: exit %d, want %d", code, exitUsage)
	}
}

// TestSeedLinesEstimateTimeLeft: the per-seed line says how long the run took so far and how
// long the seeds left should take at that pace.
func TestSeedLinesEstimateTimeLeft(t *testing.T) {
	var b strings.Builder
	clock := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	line := seedLines(&b, "noise", func() time.Time { return clock })
	clock = clock.Add(10 * time.Second)
	line(5, 1, 4)
	clock = clock.Add(30 * time.Second)
	line(6, 4, 4)
	want := "sim noise: seed 5 done (1/4 seeds) in 10s, about 30s left\nsim noise: seed 6 done (4/4 seeds) in 40s, about 0s left\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestDemoRefusesAFolderInUse: `demo --out DIR` on a folder that holds anything (an exchange
// directory given by mistake) exits 2 and writes nothing there. It wrote its simulated
// catalogue into DIR/catalog before it found the daemon serving DIR, and that daemon chose the
// simulated tasks for its trainer's batches (all 4 of a real batch were sim-* tasks); with no
// daemon, its requests and rollouts joined the real ones. A new or empty folder still works
// (TestDemo).
func TestDemoRefusesAFolderInUse(t *testing.T) {
	dir := t.TempDir()
	catalogue := `{"env":"real","task_id":"1"}` + "\n"
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "catalog"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "catalog", "tasks.jsonl"), []byte(catalogue), 0o644))
	code, _, errs := runCLI("demo", "--steps", "1", "--out", dir)
	if code != exitUsage || !strings.Contains(errs, "not empty") {
		t.Fatalf("demo --out on a folder in use: exit %d, %q; want exit %d saying it is not empty", code, errs, exitUsage)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "catalog"))
	if len(entries) != 1 {
		t.Errorf("catalog/ holds %d files after the refusal; want only the real catalogue", len(entries))
	}
	if _, err := os.Stat(filepath.Join(dir, "rollouts")); err == nil {
		t.Errorf("the refused demo made rollouts/")
	}
	file := filepath.Join(t.TempDir(), "f")
	must(os.WriteFile(file, nil, 0o644))
	if code, _, errs := runCLI("demo", "--steps", "1", "--out", file); code != exitUsage || !strings.Contains(errs, "not a folder") {
		t.Errorf("demo --out on a file: exit %d, %q", code, errs)
	}
}
