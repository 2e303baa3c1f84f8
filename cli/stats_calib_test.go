package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envsched/envsched/ledger"
	"github.com/envsched/envsched/propagate"
)

// TestStatsShowsCalibration: on a generated run whose groups all complete, `stats` prints the
// ledger's tables and the savings estimate as one, and `stats --json` the same numbers; --env
// keeps one environment's cells and the summary over all.
func TestStatsShowsCalibration(t *testing.T) {
	dir, run := generatedDir(t)
	code, out, errOut := opsApp(t, "stats", "--dir", dir, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Calibration ledger.Detail `json:"calibration"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	c := rep.Calibration
	if c.Overall.Groups == 0 || c.Channels["random_slot"].Groups != int64(run.Answers) || c.Open != 0 ||
		len(c.Reliability) != ledger.Bins || len(c.Envs) != len(run.Envs) {
		t.Fatalf("calibration %+v; want every group measured, one random slot per answer, %d envs", c, len(run.Envs))
	}
	code, table, _ := opsApp(t, "stats", "--dir", dir)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{fmt.Sprintf("groups measured %d", c.Overall.Groups), "never_tried", "rechosen",
		"random_slot", fmt.Sprintf("last %d answers", min(ledger.RecentAnswers, run.Answers)), "reliability", "(an estimate)", run.Envs[0] + " / rechosen"} {
		if !strings.Contains(table, want) {
			t.Errorf("stats table does not say %q:\n%s", want, table)
		}
	}
	code, out, _ = opsApp(t, "stats", "--dir", dir, "--json", "--env", run.Envs[1])
	var one struct {
		Calibration ledger.Detail `json:"calibration"`
	}
	if err := json.Unmarshal([]byte(out), &one); code != 0 || err != nil {
		t.Fatalf("exit %d, %v", code, err)
	}
	if len(one.Calibration.Envs) != 1 || one.Calibration.Overall != c.Overall {
		t.Errorf("--env: %d envs, overall %+v; want one env and the overall of all", len(one.Calibration.Envs), one.Calibration.Overall)
	}
}

// TestStatsShowsCorrections: after two answers of `envsched batch`, the second of which
// measured the groups of the first's tasks, `stats --json` shows the corrections stored with
// the second (groups measured, every environment of the first's tasks), --env keeps one
// environment's, and the table shows them by the same names.
func TestStatsShowsCorrections(t *testing.T) {
	dir := exchangeDir(t)
	if err := os.Remove(filepath.Join(dir, "rollouts", "r.jsonl")); err != nil { // every task untried
		t.Fatal(err)
	}
	code, out, msg := runApp("batch", "--dir", dir, "--size", "9", "--group-size", "4", "--id", "s1", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	var b struct {
		Tasks []struct {
			Env    string `json:"env"`
			TaskID string `json:"task_id"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatal(err)
	}
	var lines strings.Builder
	for i, tk := range b.Tasks {
		for j := range 4 {
			fmt.Fprintf(&lines, `{"env": %q, "task_id": %q, "reward": %d, "request_id": "s1"}`+"\n", tk.Env, tk.TaskID, (i/2+j*(i%2))%2)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "rollouts", "s1.jsonl"), []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, msg := runApp("batch", "--dir", dir, "--size", "9", "--group-size", "4", "--id", "s2"); code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	stats := func(args ...string) propagate.Corrections {
		t.Helper()
		code, out, msg := runApp(append([]string{"stats", "--dir", dir, "--json"}, args...)...)
		var rep struct {
			Corrections propagate.Corrections `json:"corrections"`
		}
		if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
			t.Fatalf("exit %d: %s %v", code, msg, err)
		}
		return rep.Corrections
	}
	c := stats()
	if c.Dispersion["never_tried"].Groups == 0 || c.ExplorationReturn.Groups == 0 || len(c.Envs) == 0 {
		t.Fatalf("corrections %+v; want the groups of s1 measured", c)
	}
	env := b.Tasks[0].Env
	if one := stats("--env", env); len(one.Envs) != 1 || one.Envs[env] != c.Envs[env] || one.CoverageReturn != c.CoverageReturn {
		t.Errorf("--env %s: %+v; want its entry alone and the rest as without", env, one)
	}
	_, table, _ := runApp("stats", "--dir", dir)
	for _, want := range []string{"corrections stored with the last answer", env + " / never_tried", "exploration_return",
		"random_return", "coverage_return", "rechosen_factor", "rechosen_offset", "rechosen_trend"} {
		if !strings.Contains(table, want) {
			t.Errorf("stats table does not say %q:\n%s", want, table)
		}
	}
}
