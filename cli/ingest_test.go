package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// ingestCLIEnv makes the test binary run the envsched command line given after "--" and exit
// with its code: a real second process for the locking test.
const ingestCLIEnv = "ENVSCHED_TEST_CLI"

func TestHelperIngestCLI(t *testing.T) {
	if os.Getenv(ingestCLIEnv) == "" {
		t.Skip("helper process only")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = append([]string{"envsched"}, args[i+1:]...)
			break
		}
	}
	err := NewApp().Run(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "envsched: %v\n", err)
	}
	os.Exit(ExitCode(err))
}

// ingestCLI runs the app in-process and returns its output and exit code.
func ingestCLI(t *testing.T, args ...string) (string, int) {
	t.Helper()
	app := NewApp()
	var out bytes.Buffer
	app.Writer, app.ErrWriter = &out, &out
	err := app.Run(append([]string{"envsched"}, args...))
	if err != nil {
		return out.String() + err.Error(), ExitCode(err)
	}
	return out.String(), exitOK
}

func ingestWrite(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestIngestAndStatsCommands(t *testing.T) {
	dir := t.TempDir()
	ingestWrite(t, filepath.Join(dir, "catalog", "tasks.jsonl"),
		`{"env":"tau","task_id":"1","text":"refund"}`+"\n"+`{"env":"tau","task_id":"2"}`+"\n")
	ingestWrite(t, filepath.Join(dir, "rollouts", "w0", "r.jsonl"), strings.Join([]string{
		`{"env":"tau","task":"1","reward":1,"step":1,"group_id":"g","rollout_id":"a"}`,
		`{"env":"tau","task":"1","reward":1,"step":1,"group_id":"g","rollout_id":"b"}`,
		`{"env":"tau","task":"1","reward":1,"step":1,"group_id":"g","rollout_id":"b"}`,
		`{"env":"bfcl","task":"9","reward":2,"step":1}`,
		`{"env":"bfcl","task":"9","reward":0,"step":1}`,
		`not json`,
		`{"env":"bfcl","task":"9","rew`,
	}, "\n"))
	out, code := ingestCLI(t, "ingest", "--dir", dir)
	want := "2 files (2 with new bytes), 4 new rollouts, 2 catalogue tasks (3 new tasks), 1 quarantined, 1 duplicates, 1 clipped\n"
	if code != exitOK || out != want {
		t.Fatalf("ingest: exit %d, printed %q; want 0 and %q", code, out, want)
	}
	if out, code = ingestCLI(t, "ingest", "--dir", dir); code != exitOK || !strings.Contains(out, " 0 new rollouts") {
		t.Fatalf("second ingest: exit %d, printed %q; want nothing new", code, out)
	}
	out, code = ingestCLI(t, "stats", "--dir", dir, "--json")
	if code != exitOK {
		t.Fatalf("stats --json: exit %d: %s", code, out)
	}
	var rep statsReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("stats --json printed %q: %v", out, err)
	}
	tau, bfcl := rep.Envs["tau"], rep.Envs["bfcl"]
	if tau.Tasks != 2 || tau.TasksSeen != 1 || tau.Rollouts != 2 || tau.MeanReward != 1 || tau.Groups != 1 || tau.DegenerateGroups != 1 {
		t.Errorf("tau %+v; want 2 tasks, 1 seen, 2 rollouts, mean 1, 1 group degenerate", tau)
	}
	if bfcl.Tasks != 1 || bfcl.Rollouts != 2 || bfcl.MeanReward != 0.5 || bfcl.Groups != 1 || bfcl.DegenerateGroups != 0 {
		t.Errorf("bfcl %+v; want 1 task, 2 rollouts, mean 0.5, 1 group not degenerate", bfcl)
	}
	if rep.Totals.Rollouts != 4 || rep.Totals.Tasks != 3 || rep.Totals.MeanReward != 0.75 || rep.Quarantined != 1 || rep.Duplicates != 1 || rep.Clipped != 1 {
		t.Errorf("totals %+v quarantined %d duplicates %d clipped %d", rep.Totals, rep.Quarantined, rep.Duplicates, rep.Clipped)
	}
	if out, code = ingestCLI(t, "stats", "--dir", dir, "--env", "tau"); code != exitOK ||
		!strings.Contains(out, "tau") || strings.Contains(out, "bfcl") || !strings.Contains(out, "100.0% of 1") {
		t.Errorf("stats --env tau: exit %d, printed\n%s", code, out)
	}
	if out, code = ingestCLI(t, "stats", "--dir", dir, "--env", "nope"); code != exitError || !strings.Contains(out, `no environment "nope"`) {
		t.Errorf("stats --env nope: exit %d, printed %q; want exit 1 naming the env", code, out)
	}
	// newuser14: a typo of a known environment names it (the known list shows only ten).
	if out, code = ingestCLI(t, "stats", "--dir", dir, "--env", "bfc"); code != exitError || !strings.Contains(out, `no environment "bfc" (did you mean "bfcl"?)`) {
		t.Errorf("stats --env bfc: exit %d, printed %q; want the environment meant", code, out)
	}
	db, err := storage.Open(filepath.Join(dir, "envsched.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	storagetest.MustCheck(t, db, dir)
	db.Close()
}

func TestIngestRewardRangeIsFixed(t *testing.T) {
	dir := t.TempDir()
	ingestWrite(t, filepath.Join(dir, "rollouts", "r.jsonl"), `{"env":"e","task":"1","reward":5}`+"\n")
	if out, code := ingestCLI(t, "ingest", "--dir", dir, "--reward-min", "0", "--reward-max", "10"); code != exitOK || !strings.Contains(out, "0 clipped") {
		t.Fatalf("ingest with range 0..10: exit %d, %q", code, out)
	}
	out, code := ingestCLI(t, "ingest", "--dir", dir, "--reward-max", "1")
	if code != exitError || !strings.Contains(out, "database has [0, 10]") {
		t.Fatalf("ingest with another range: exit %d, %q; want exit 1 naming the stored range", code, out)
	}
}

// TestSecondProcessIsLocked holds the database in this process and runs `envsched ingest` in
// another: it must fail within about a second with exit code 3 and say why.
func TestSecondProcessIsLocked(t *testing.T) {
	dir := t.TempDir()
	db, err := storage.Open(filepath.Join(dir, "envsched.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperIngestCLI$", "--", "ingest", "--dir", dir)
	cmd.Env = append(os.Environ(), ingestCLIEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	elapsed := time.Since(start)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitLocked {
		t.Fatalf("second process: %v, stderr %q; want exit code 3", err, stderr.String())
	}
	msg := fmt.Sprintf("database file %s is locked by another process (pid %d", filepath.Join(dir, "envsched.db"), os.Getpid())
	if !strings.Contains(stderr.String(), msg) {
		t.Errorf("stderr %q; want it to say %q", stderr.String(), msg)
	}
	if elapsed > 5*time.Second {
		t.Errorf("second process took %v to give up; the lock timeout is 1s", elapsed)
	}
	// newuser14: a new user runs ingest, or batch, beside the daemon; the message said only that
	// the file is locked. It now says what to do instead when the holder is `envsched run`.
	for _, tc := range []struct{ cmd, want string }{
		{"ingest", "it ingests every new line itself"},
		{"batch", "ask it for a batch by writing DIR/requests/ID.json"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperIngestCLI$", "--", tc.cmd, "--dir", dir)
		cmd.Env = append(os.Environ(), ingestCLIEnv+"=1")
		out, err := cmd.CombinedOutput()
		if !errors.As(err, &exit) || exit.ExitCode() != exitLocked {
			t.Errorf("%s beside the holder: %v; want exit code 3", tc.cmd, err)
		}
		if !strings.Contains(string(out), tc.want) {
			t.Errorf("%s beside the holder: %q; want it to say %q", tc.cmd, out, tc.want)
		}
	}
}
