package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRolloutFileLinkedIntoRolloutsAfterReadAsCatalogue (hostile15's leftover): a rollout
// file written into catalog/ by mistake, read there as catalogue rows, then given a name in
// rollouts/ too (ln catalog/r.jsonl rollouts/r.jsonl, the catalog/ name kept) stayed a
// catalogue file for good: none of its rollouts ever counted, without a word (rollouts_seen 0
// for 4 lines). Its first complete line now decides, as for a file linked into both folders
// before envsched first saw it: a rollout makes it a rollout file under its rollouts/ name,
// read from its start, its catalogue rows no longer listed; logged at WARN.
func TestRolloutFileLinkedIntoRolloutsAfterReadAsCatalogue(t *testing.T) {
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "rollouts"), 0o755))
	d := start(t, dir, opts{})
	d.waitReady()
	var b strings.Builder
	for i := range 4 {
		fmt.Fprintf(&b, `{"env":"env-0","task_id":"task-%d","reward":1}`+"\n", i)
	}
	cat, roll := filepath.Join(dir, "catalog", "r.jsonl"), filepath.Join(dir, "rollouts", "r.jsonl")
	must(t, os.WriteFile(filepath.Join(dir, "catalog", ".r.jsonl"), []byte(b.String()), 0o644))
	must(t, os.Rename(filepath.Join(dir, "catalog", ".r.jsonl"), cat))
	if got := barrier(t, d, "as-catalogue"); got != 0 {
		t.Fatalf("in catalog/ only: rollouts_seen %d; want 0", got)
	}
	must(t, os.Link(cat, roll))
	if got := barrier(t, d, "linked"); got != 4 {
		t.Errorf("linked into rollouts/: rollouts_seen %d; want 4\n%s", got, tail(d.stderr.String(), 2000))
	}
	f, err := os.OpenFile(roll, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(`{"env":"env-1","task_id":"task-9","reward":0}` + "\n")
	must(t, err)
	must(t, f.Close())
	if got := barrier(t, d, "appended"); got != 5 {
		t.Errorf("one line appended: rollouts_seen %d; want 5", got)
	}
	if !strings.Contains(d.stderr.String(), "its first line is a rollout") {
		t.Errorf("the switch was not logged\n%s", tail(d.stderr.String(), 2000))
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Fatalf("SIGTERM: exit %d", code)
	}
	// A restart keeps it a rollout file: nothing counted again.
	d = start(t, dir, opts{})
	d.waitReady()
	if got := barrier(t, d, "restarted"); got != 5 {
		t.Errorf("after a restart: rollouts_seen %d; want 5", got)
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}

// TestCatalogueWithScoreLinkedIntoBothStaysCatalogue (hostile15's leftover): a catalogue whose
// rows carry a numeric `score` (a difficulty, a pass rate) beside their text, named in both
// catalog/ and rollouts/ (hard links) when envsched first saw it, was read as a rollout file
// (its first line parses as a rollout: env, task, score): every row counted as a rollout and
// its tasks never listed. A first line with a task's description (text, prompt, tools, ...)
// and a `score` but no `reward` and none of a rollout's own keys (group, step, request or
// rollout id) is now a catalogue row.
func TestCatalogueWithScoreLinkedIntoBothStaysCatalogue(t *testing.T) {
	dir := t.TempDir()
	ensureCatalog(t, dir)
	must(t, os.MkdirAll(filepath.Join(dir, "rollouts"), 0o755))
	var b strings.Builder
	for i := range 6 {
		fmt.Fprintf(&b, `{"env":"scored","task_id":"s-%d","text":"solve puzzle %d","score":0.%d}`+"\n", i, i, i+1)
	}
	cat := filepath.Join(dir, "catalog", "scored.jsonl")
	must(t, os.WriteFile(cat, []byte(b.String()), 0o644))
	must(t, os.Link(cat, filepath.Join(dir, "rollouts", "scored.jsonl")))
	d := start(t, dir, opts{})
	d.waitReady()
	if got := barrier(t, d, "first"); got != 0 {
		t.Errorf("rollouts_seen %d; want 0 (catalogue rows counted as rollouts)", got)
	}
	writeRequest(t, dir, "scored", `{"size": 6, "envs": ["scored"]}`)
	var ans struct {
		Tasks []struct {
			Env  string `json:"env"`
			Task string `json:"task_id"`
		} `json:"tasks"`
	}
	data := waitAnswer(t, d, "scored")
	if err := json.Unmarshal(data, &ans); err != nil || len(ans.Tasks) != 6 {
		t.Errorf("a request for the 6 tasks of the linked catalogue: %v\n%s", err, data)
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}
