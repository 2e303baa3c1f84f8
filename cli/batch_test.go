package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// exchangeDir makes an exchange directory with a catalogue of 3 environments × 10 tasks and a
// few rollouts.
func exchangeDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var cat, roll bytes.Buffer
	for e := range 3 {
		for k := range 10 {
			fmt.Fprintf(&cat, `{"env": "env-%d", "task_id": "%d", "text": "book a flight to city %d", "tools": ["search", "book"]}`+"\n", e, k, k)
			if k < 4 {
				for r := range 8 {
					fmt.Fprintf(&roll, `{"env": "env-%d", "task_id": "%d", "reward": %d, "step": 1}`+"\n", e, k, (r+k)%2)
				}
			}
		}
	}
	for name, data := range map[string][]byte{"catalog/tasks.jsonl": cat.Bytes(), "rollouts/r.jsonl": roll.Bytes()} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runApp runs the command line in process and returns its exit code, standard output and the
// error message main would print.
func runApp(args ...string) (int, string, string) {
	var out, errw bytes.Buffer
	app := NewApp()
	app.Writer, app.ErrWriter = &out, &errw
	err := app.Run(append([]string{"envsched"}, args...))
	if err != nil {
		return ExitCode(err), out.String(), err.Error()
	}
	return exitOK, out.String(), ""
}

func TestBatchCommand(t *testing.T) {
	dir := exchangeDir(t)
	code, out, msg := runApp("batch", "--dir", dir, "--size", "6", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	var b struct {
		ID    string         `json:"id"`
		Step  int64          `json:"step"`
		Size  int            `json:"size"`
		Seen  int64          `json:"rollouts_seen"`
		Envs  map[string]int `json:"envs"`
		Tasks []struct {
			Env    string `json:"env"`
			TaskID string `json:"task_id"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatalf("--json did not print the batch object: %v\n%s", err, out)
	}
	if b.ID != "batch-1" || b.Step != 1 || b.Size != 6 || len(b.Tasks) != 6 || b.Seen != 96 || len(b.Envs) != 3 {
		t.Errorf("batch: %+v", b)
	}
	// The same ID prints the stored batch unchanged, whatever the flags say now.
	_, again, _ := runApp("batch", "--dir", dir, "--id", "batch-1", "--size", "2", "--json")
	if again != out {
		t.Errorf("the same ID printed another batch:\n%s\n%s", out, again)
	}
	// Without --id the next batch is batch-2, for step 2; the table names its tasks.
	code, table, msg := runApp("batch", "--dir", dir, "--size", "4")
	if code != 0 || !strings.Contains(table, "batch batch-2  step 2") || strings.Count(table, "env-") != 4 {
		t.Errorf("table (exit %d, %s):\n%s", code, msg, table)
	}
}

func TestBatchCommandErrors(t *testing.T) {
	dir := exchangeDir(t)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--size", "31"}, 1, "size 31 is larger than the 30 eligible tasks"},
		{[]string{"--env", "nope"}, 1, `envs names unknown environment "nope"`},
		{[]string{"--size", "0"}, 2, "--size 0"},
		{[]string{"--id", "../x"}, 2, "--id"},
		{[]string{"--exploit", "greedy"}, 2, "exploit"},
		{[]string{"--gamma", "2"}, 2, "gamma"},
		{[]string{"--feature-ridge", "-1"}, 2, "feature ridge"},
		{[]string{"--prior-refit", "-0.1"}, 2, "prior refit"},
		{[]string{"--rechosen-rate", "1.5"}, 2, "re-chosen rate"},
		{[]string{"--rechosen-trend", "1"}, 2, "re-chosen trend"},
		{[]string{"--rechosen-trend", "-0.1"}, 2, "re-chosen trend"},
		{[]string{"--step", "-4"}, 2, "--step -4"}, // a bad flag is exit 2, as --size 0 is
		{[]string{"--step", "1000000001"}, 2, "--step 1000000001"},
		{[]string{"--dispersion-memory", "1"}, 2, "dispersion memory"},
		{[]string{"--quota-size", "1.5"}, 2, "quota size"},
		{[]string{"--transfer", "-0.1"}, 2, "transfer"},
		{[]string{"--fresh", "1.5"}, 2, "fresh is 1.5, want in [0, 1]"},
		{[]string{"--fresh", "NaN"}, 2, "fresh is NaN"},
		{[]string{"--overlap", "-0.5"}, 2, "overlap is -0.5"},
		{[]string{"--overlap", "NaN"}, 2, "overlap is NaN"},
		{[]string{"--exploit", "spreads"}, 2, "variance, informative, spread, lasting or matched"},
		{[]string{"--exploit-graded", "best"}, 2, "--exploit-graded: "},
		// finite but beyond any use: the scores overflowed to infinity and the answer could not
		// be encoded (exit 1 here; in the daemon, a stop at every request)
		{[]string{"--coverage-weight", "1e308"}, 2, "coverage weight"},
		{[]string{"--sim-penalty", "1e308"}, 2, "similarity penalty"},
		{[]string{"--coverage-weight", "NaN"}, 2, "coverage weight"},
		{[]string{"--kappa", "Inf"}, 2, "kappa"},
		{[]string{"--min-share", "-1"}, 2, "min share"},
		{[]string{"--hops", "-1"}, 2, "hops"},
	}
	for _, c := range cases {
		code, _, msg := runApp(append([]string{"batch", "--dir", dir}, c.args...)...)
		if code != c.code || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: exit %d, %q; want exit %d and one line with %q", c.args, code, msg, c.code, c.want)
		}
	}
	empty := t.TempDir()
	if code, _, msg := runApp("batch", "--dir", empty); code != 1 || !strings.Contains(msg, "no tasks are known") {
		t.Errorf("empty exchange directory: exit %d, %q", code, msg)
	}
}

func TestStatsShowsPredictions(t *testing.T) {
	dir := exchangeDir(t)
	if code, _, msg := runApp("ingest", "--dir", dir); code != 0 {
		t.Fatal(msg)
	}
	code, out, msg := runApp("stats", "--dir", dir, "--json")
	if code != 0 {
		t.Fatal(msg)
	}
	var rep struct {
		Envs map[string]struct {
			Var float64 `json:"predicted_variance"`
			Deg float64 `json:"predicted_degenerate"`
		} `json:"envs"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	// Every environment of the exchange directory, or the loop below checks nothing.
	if want := []string{"env-0", "env-1", "env-2"}; len(rep.Envs) != len(want) {
		t.Fatalf("stats --json has %d environments under \"envs\"; want %v:\n%s", len(rep.Envs), want, out)
	}
	for name, e := range rep.Envs {
		// Half the rolled-out tasks are fair coins: variance well above 0, degenerate well below 1.
		if e.Var <= 0.05 || e.Var > 0.25 || e.Deg <= 0 || e.Deg >= 0.5 {
			t.Errorf("env %s: predicted variance %g, degenerate %g", name, e.Var, e.Deg)
		}
	}
	_, table, _ := runApp("stats", "--dir", dir)
	if !strings.Contains(table, "predicted degenerate (G=8)") {
		t.Errorf("stats table lacks the predictions:\n%s", table)
	}
}

// TestStatsPredictsForTheRunsGroupSize: the predicted degenerate share is for the group size
// the run's requests ask (the last answered request's group_size), or --group-size; a larger G
// predicts fewer all-equal groups.
func TestStatsPredictsForTheRunsGroupSize(t *testing.T) {
	dir := exchangeDir(t)
	if code, _, msg := runApp("batch", "--dir", dir, "--size", "4", "--group-size", "4"); code != 0 {
		t.Fatal(msg)
	}
	degOf := func(args ...string) (int, float64) {
		t.Helper()
		code, out, msg := runApp(append([]string{"stats", "--dir", dir, "--json"}, args...)...)
		if code != 0 {
			t.Fatal(msg)
		}
		var rep struct {
			G      int `json:"group_size"`
			Totals struct {
				Deg float64 `json:"predicted_degenerate"`
			} `json:"totals"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		return rep.G, rep.Totals.Deg
	}
	g4, d4 := degOf()
	g16, d16 := degOf("--group-size", "16")
	if g4 != 4 || g16 != 16 || !(d16 < d4) {
		t.Errorf("G %d: %g, G %d: %g; want G 4 from the last request, and a smaller share for G 16", g4, d4, g16, d16)
	}
	if _, table, _ := runApp("stats", "--dir", dir); !strings.Contains(table, "predicted degenerate (G=4)") {
		t.Errorf("stats table names another G:\n%s", table)
	}
	if code, _, _ := runApp("stats", "--dir", dir, "--group-size", "2000"); code != exitUsage {
		t.Errorf("--group-size 2000: exit %d, want %d", code, exitUsage)
	}
}
