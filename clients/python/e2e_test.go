package python_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/envsched/envsched/internal/testbin"
)

// waitLimit bounds every wait for the daemon or the trainer; it only turns a hang into a
// failure, it is never what a test measures.
const waitLimit = 2 * time.Minute

// repoRoot is the module root (this file is in clients/python).
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func needPython(t *testing.T) string {
	t.Helper()
	return testbin.Python(t, "the Python client's end-to-end tests")
}

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Remove()
	os.Exit(code)
}

// daemon is a running `envsched run`.
type daemon struct {
	cmd *exec.Cmd
	out *bytes.Buffer
}

func startDaemon(t *testing.T, bin, dir string) *daemon {
	t.Helper()
	os.Remove(filepath.Join(dir, "status.json"))
	var out bytes.Buffer
	cmd := exec.Command(bin, "run", "--dir", dir, "--status-interval", "100ms")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemon{cmd: cmd, out: &out}
	t.Cleanup(func() {
		if d.cmd.ProcessState == nil {
			d.cmd.Process.Kill()
			d.cmd.Wait()
		}
	})
	waitFor(t, "status.json of the new daemon", func() bool {
		_, err := os.Stat(filepath.Join(dir, "status.json"))
		return err == nil
	})
	return d
}

// stop sends SIGTERM and requires exit code 0.
func (d *daemon) stop(t *testing.T) {
	t.Helper()
	d.cmd.Process.Signal(syscall.SIGTERM)
	if err := d.cmd.Wait(); err != nil {
		t.Fatalf("envsched run did not stop cleanly: %v\n%s", err, d.out)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type status struct {
	Rollouts         int64   `json:"rollouts"`
	Quarantined      int64   `json:"quarantined"`
	Duplicates       int64   `json:"duplicates"`
	RequestsAnswered int64   `json:"requests_answered"`
	LastRequest      *string `json:"last_request"`
}

func readStatus(t *testing.T, dir string) status {
	t.Helper()
	var s status
	data, err := os.ReadFile(filepath.Join(dir, "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("status.json: %v", err)
	}
	return s
}

// logEntry is one line of the example trainer's --batch-log.
type logEntry struct {
	ID       string     `json:"id"`
	Step     int        `json:"step"`
	Fallback bool       `json:"fallback"`
	Tasks    [][]string `json:"tasks"`
}

func readLog(t *testing.T, path string) []logEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		t.Fatal(err)
	}
	defer f.Close()
	var out []logEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e logEntry
		if json.Unmarshal(sc.Bytes(), &e) == nil { // a half line of a killed trainer is skipped
			out = append(out, e)
		}
	}
	return out
}

// trainerCmd is the example trainer for 30 steps.
func trainerCmd(py, root, dir, work string, delay string) *exec.Cmd {
	cmd := exec.Command(py, filepath.Join(root, "examples", "python_trainer", "train.py"),
		"--dir", dir, "--steps", "30", "--batch-size", "8", "--group-size", "4",
		"--checkpoint", filepath.Join(work, "ckpt.json"), "--checkpoint-every", "4",
		"--batch-log", filepath.Join(work, "batches.log"), "--step-delay", delay, "--timeout", "60")
	cmd.Dir = work
	return cmd
}

// TestPythonTrainerKilledAndResumed is the end-to-end test of issue 6: the real daemon, the
// example trainer killed with SIGKILL in the middle and resumed, 30 steps in all.
func TestPythonTrainerKilledAndResumed(t *testing.T) {
	py := needPython(t)
	root := repoRoot(t)
	bin := testbin.Envsched(t)
	dir, work := t.TempDir(), t.TempDir()
	d := startDaemon(t, bin, dir)

	// First run: killed once it has logged 13 batches (its last checkpoint is step 12).
	var out1 bytes.Buffer
	first := trainerCmd(py, root, dir, work, "0.05")
	first.Stdout, first.Stderr = &out1, &out1
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(work, "batches.log")
	waitFor(t, "13 batches of the first trainer run", func() bool { return len(readLog(t, logPath)) >= 13 })
	first.Process.Signal(syscall.SIGKILL)
	first.Wait()
	killedAt := len(readLog(t, logPath))

	// Second run: resumes from the checkpoint and finishes.
	second := trainerCmd(py, root, dir, work, "0")
	if out, err := second.CombinedOutput(); err != nil {
		t.Fatalf("resumed trainer: %v\n%s\nfirst run:\n%s", err, out, &out1)
	} else if !strings.Contains(string(out), "resumed from") {
		t.Fatalf("the second run did not resume:\n%s", out)
	}

	entries := readLog(t, logPath)
	checkBatches(t, dir, entries, killedAt)
	lines, distinct := countRollouts(t, dir)
	s := barrierStatus(t, dir)
	if s.Rollouts != int64(distinct) || s.Duplicates != int64(lines-distinct) || s.Quarantined != 0 {
		t.Errorf("status.json: %d rollouts, %d duplicates, %d quarantined; the trainer wrote %d lines "+
			"with %d distinct rollout ids", s.Rollouts, s.Duplicates, s.Quarantined, lines, distinct)
	}
	if s.RequestsAnswered != 31 {
		t.Errorf("status.json: %d requests answered, want 31 (30 trainer IDs once each, and the check)", s.RequestsAnswered)
	}
	if distinct != 30*8*4 {
		t.Errorf("%d distinct rollouts, want 30 steps x 8 tasks x 4 = 960", distinct)
	}

	// A batch file lost while its request stays is written again, byte for byte, at start-up.
	want, _ := os.ReadFile(filepath.Join(dir, "batches", "toy-000005.json"))
	d.stop(t)
	os.Remove(filepath.Join(dir, "batches", "toy-000005.json"))
	startDaemon(t, bin, dir)
	waitFor(t, "toy-000005.json written again", func() bool {
		got, err := os.ReadFile(filepath.Join(dir, "batches", "toy-000005.json"))
		return err == nil && bytes.Equal(got, want)
	})
}

// checkBatches checks that IDs toy-000001 … toy-000030 were each answered once, with no error
// file and no fallback, and that every time the trainer received an ID (again, after the
// resume) it got the same tasks as the batch file holds.
func checkBatches(t *testing.T, dir string, entries []logEntry, killedAt int) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "batches", "*"))
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	sort.Strings(names)
	var want []string
	for i := 1; i <= 30; i++ {
		want = append(want, fmt.Sprintf("toy-%06d.json", i))
	}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("batches folder holds %v,\nwant exactly %v", names, want)
	}
	seen := map[string]int{}
	for _, e := range entries {
		seen[e.ID]++
		if e.Fallback {
			t.Errorf("batch %s was a fallback: the daemon did not answer", e.ID)
		}
		var b struct {
			Tasks []struct {
				Env    string `json:"env"`
				TaskID string `json:"task_id"`
			} `json:"tasks"`
		}
		data, _ := os.ReadFile(filepath.Join(dir, "batches", e.ID+".json"))
		if err := json.Unmarshal(data, &b); err != nil {
			t.Fatalf("batch %s: %v", e.ID, err)
		}
		var got [][]string
		for _, task := range b.Tasks {
			got = append(got, []string{task.Env, task.TaskID})
		}
		if len(got) != 8 || fmt.Sprint(got) != fmt.Sprint(e.Tasks) {
			t.Errorf("batch %s: the trainer got %v, the file holds %v", e.ID, e.Tasks, got)
		}
	}
	replayed := 0
	for _, n := range seen {
		if n > 1 {
			replayed++
		}
	}
	if len(seen) != 30 || replayed == 0 {
		t.Errorf("trainer received %d distinct IDs (%d received again after the kill at %d); want 30, some again",
			len(seen), replayed, killedAt)
	}
}

// countRollouts counts the complete lines of every rollout file and their distinct rollout ids.
func countRollouts(t *testing.T, dir string) (lines, distinct int) {
	t.Helper()
	ids := map[string]bool{}
	files, _ := filepath.Glob(filepath.Join(dir, "rollouts", "*.jsonl"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		complete := data[:bytes.LastIndexByte(data, '\n')+1]
		for _, line := range bytes.Split(bytes.TrimSuffix(complete, []byte("\n")), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			var r struct {
				RolloutID string `json:"rollout_id"`
			}
			if err := json.Unmarshal(line, &r); err != nil || r.RolloutID == "" {
				t.Fatalf("%s: line %q is not a rollout with an id", f, line)
			}
			lines++
			ids[r.RolloutID] = true
		}
	}
	return lines, len(ids)
}

// barrierStatus asks one more batch (the barrier: every rollout line written before it is
// counted first) and returns status.json once it reports that answer.
func barrierStatus(t *testing.T, dir string) status {
	t.Helper()
	req := filepath.Join(dir, "requests", "final-check.json")
	os.WriteFile(filepath.Join(dir, "requests", ".final-check.json.tmp"), []byte(`{"size": 1}`), 0o644)
	os.Rename(filepath.Join(dir, "requests", ".final-check.json.tmp"), req)
	var s status
	waitFor(t, "the answer to final-check in status.json", func() bool {
		s = readStatus(t, dir)
		return s.LastRequest != nil && *s.LastRequest == "final-check"
	})
	os.Remove(req)
	os.Remove(filepath.Join(dir, "batches", "final-check.json"))
	return s
}

// TestPythonUnitTestsAgainstDaemon runs the Python suites (client and adapters) with
// ENVSCHED_BIN set, so that their real-daemon cases run too.
func TestPythonUnitTestsAgainstDaemon(t *testing.T) {
	py := needPython(t)
	bin := testbin.Envsched(t)
	cmd := exec.Command(py, "-m", "unittest", "discover", "-s", "tests", "-v")
	cmd.Dir = filepath.Join(repoRoot(t), "clients", "python")
	cmd.Env = append(os.Environ(), "ENVSCHED_BIN="+bin, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python unit tests failed: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "skipped 'ENVSCHED_BIN") {
		t.Errorf("the real-daemon cases were skipped:\n%s", out)
	}
}

// TestTrainerCheckpointFollowsItsDir: the example trainer keeps its checkpoint with the
// exchange directory by default, so a run against a fresh --dir starts from step 1 instead of
// resuming another run's checkpoint; a checkpoint named for another --dir is refused (exit 2).
func TestTrainerCheckpointFollowsItsDir(t *testing.T) {
	py := needPython(t)
	root := repoRoot(t)
	work, a, b := t.TempDir(), t.TempDir(), t.TempDir()
	train := func(args ...string) (string, int) {
		cmd := exec.Command(py, append([]string{filepath.Join(root, "examples", "python_trainer", "train.py"),
			"--steps", "2", "--timeout", "0.05"}, args...)...)
		cmd.Dir = work // no envsched runs: every batch is the uniform fallback
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	if out, code := train("--dir", a); code != 0 || !strings.Contains(out, "step   2") {
		t.Fatalf("first run: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(a, "toy-checkpoint.json")); err != nil {
		t.Fatalf("no checkpoint in the exchange directory: %v", err)
	}
	if out, code := train("--dir", b); code != 0 || strings.Contains(out, "resumed") || !strings.Contains(out, "step   1") {
		t.Errorf("a fresh --dir did not start a fresh run: exit %d\n%s", code, out)
	}
	out, code := train("--dir", b, "--checkpoint", filepath.Join(a, "toy-checkpoint.json"))
	if code != 2 || !strings.Contains(out, "is the checkpoint of a run against --dir") {
		t.Errorf("another run's checkpoint: exit %d, want 2 and a clear error\n%s", code, out)
	}
	if out, code := train("--dir", a); code != 0 || !strings.Contains(out, "nothing to do") {
		t.Errorf("a finished run resumed: exit %d, want a line saying there is nothing to do\n%s", code, out)
	}
}
