package daemon

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envsched/envsched/propagate"
)

// TestShownEnvsKeepsTheMostMeasured: over StatusEnvsMax environments, status.json keeps those
// with the most groups behind their correction (ties by name) and counts the rest; the cached
// corrections it starts from are left whole.
func TestShownEnvsKeepsTheMostMeasured(t *testing.T) {
	c := &propagate.Corrections{Envs: map[string]propagate.EnvCorrection{}}
	for i := range 7 {
		e := propagate.EnvCorrection{}
		e.Groups = float64(i % 4) // 0 1 2 3 0 1 2
		c.Envs[fmt.Sprintf("e%d", i)] = e
	}
	shown, omitted := shownEnvs(c, 3)
	if omitted != 4 || len(shown.Envs) != 3 {
		t.Fatalf("kept %d, omitted %d; want 3, 4", len(shown.Envs), omitted)
	}
	for _, want := range []string{"e3", "e2", "e6"} { // groups 3, then 2 twice
		if _, ok := shown.Envs[want]; !ok {
			t.Errorf("%s (most groups) left out: %v", want, shown.Envs)
		}
	}
	if len(c.Envs) != 7 {
		t.Errorf("the cached corrections lost environments: %d left", len(c.Envs))
	}
	if same, n := shownEnvs(c, 7); same != c || n != 0 {
		t.Errorf("at the cap: omitted %d, copied %v", n, same != c)
	}
}

// TestStatusListsAtMostStatusEnvsMax runs the daemon on a catalogue of more environments than
// status.json lists, measures a group in every one (two answers, the first's groups rolled out
// between them), and reads status.json as a trainer would: StatusEnvsMax environments' corrections
// and the count of the others, where before it listed every one (a catalogue of 100,000 such
// environments wrote some 20 MB every status interval, past what `envsched status` reads).
func TestStatusListsAtMostStatusEnvsMax(t *testing.T) {
	if testing.Short() {
		t.Skip("answers a batch over 1,100 environments")
	}
	const envs = StatusEnvsMax + 100
	dir := t.TempDir()
	var cat strings.Builder
	for i := range envs {
		fmt.Fprintf(&cat, `{"env":"env-%04d","task_id":"a","text":"alpha %d"}`+"\n", i, i)
		fmt.Fprintf(&cat, `{"env":"env-%04d","task_id":"b","text":"beta %d"}`+"\n", i, i)
	}
	must(t, os.MkdirAll(filepath.Join(dir, "catalog"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "catalog", "tasks.jsonl"), []byte(cat.String()), 0o644))
	r := serveTest(t, testConfig(dir, false))

	writeRequest(t, dir, "r1.json", fmt.Sprintf(`{"size": %d, "group_size": 2, "seed": 1}`, envs))
	var b1 struct {
		Tasks []struct {
			Env    string `json:"env"`
			TaskID string `json:"task_id"`
		} `json:"tasks"`
	}
	must(t, json.Unmarshal(r.batch("r1"), &b1))
	var rolls strings.Builder
	for k, p := range b1.Tasks {
		for j := range 2 {
			fmt.Fprintf(&rolls, `{"env":%q,"task_id":%q,"reward":%d,"request_id":"r1","rollout_id":"r1/%d/%d"}`+"\n",
				p.Env, p.TaskID, (k+j)%2*(k%3/2+1)%2, k, j)
		}
	}
	must(t, os.MkdirAll(filepath.Join(dir, "rollouts"), 0o755))
	tmp := filepath.Join(dir, "rollouts", ".r1.tmp")
	must(t, os.WriteFile(tmp, []byte(rolls.String()), 0o644))
	must(t, os.Rename(tmp, filepath.Join(dir, "rollouts", "r1.jsonl")))
	writeRequest(t, dir, "r2.json", fmt.Sprintf(`{"size": %d, "group_size": 2, "seed": 2}`, envs))
	r.batch("r2")
	r.stop() // the last status write is done

	s, err := readStatus(dir)
	must(t, err)
	if s.Corrections == nil {
		t.Fatal("status.json has no corrections")
	}
	measured := len(s.Corrections.Envs) + s.CorrectionsEnvsOmitted
	if measured <= StatusEnvsMax {
		t.Fatalf("only %d environments have a correction: the test measures nothing past the cap", measured)
	}
	if len(s.Corrections.Envs) != StatusEnvsMax {
		t.Errorf("status.json lists %d environments' corrections, want %d (%d omitted)",
			len(s.Corrections.Envs), StatusEnvsMax, s.CorrectionsEnvsOmitted)
	}
}
