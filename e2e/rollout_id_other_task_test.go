package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRolloutIDsOfAnotherTaskAreLogged: rollout ids unique only within a group ("step-1/i", the
// same for every task of the step) kept the first task's rollouts and skipped every other
// task's as duplicates: 8 of 40 rollouts counted, 4 tasks never seen, and nothing logged (the
// summary's duplicates alone). `envsched ingest` still skips them and now says so, naming the
// id and both tasks.
func TestRolloutIDsOfAnotherTaskAreLogged(t *testing.T) {
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "rollouts"), 0o755))
	var b strings.Builder
	for task := range 5 {
		for i := range 8 {
			fmt.Fprintf(&b, `{"env": "e", "task_id": "t%d", "reward": %d, "group_id": "g%d", "step": 1, "rollout_id": "step-1/%d"}`+"\n",
				task, (i+task)%2, task, i)
		}
	}
	must(t, os.WriteFile(filepath.Join(dir, "rollouts", "r.jsonl"), []byte(b.String()), 0o644))
	out, err := execCommand([]string{"ingest", "--dir", dir}).CombinedOutput()
	if err != nil {
		t.Fatalf("ingest: %v\n%s", err, out)
	}
	s := string(out)
	if !strings.Contains(s, "8 new rollouts") || !strings.Contains(s, "32 duplicates") {
		t.Fatalf("want 8 rollouts and 32 duplicates (the ids are still skipped):\n%s", s)
	}
	if !strings.Contains(s, "rollout_id is stored for another task") || !strings.Contains(s, "count=32") ||
		!strings.Contains(s, "rollout_id=step-1/0 env=e task=t1 stored_env=e stored_task=t0") {
		t.Errorf("want a warning that 32 rollouts were skipped for ids of another task, naming the first:\n%s", s)
	}
}
