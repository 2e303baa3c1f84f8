package ingest

import (
	"strings"
	"testing"
)

// TestLoneSurrogatesNeverMergeNamesOrIDs: Python writes "\udcff" for a byte it could not
// decode. Read as U+FFFD, two different rollout ids became one and the second rollout was
// dropped as a duplicate; two different tasks became one task "\ufffd" that the trainer could
// not look up. Now an id holding a lone surrogate is absent (the rollout counts), and a task or
// env holding one is quarantined, in rollout and catalogue files alike.
func TestLoneSurrogatesNeverMergeNamesOrIDs(t *testing.T) {
	e := newEnv(t, Options{})
	e.write("rollouts/ids.jsonl", `{"env":"e","task":"t","reward":1,"rollout_id":"r\udcff"}`+"\n"+
		`{"env":"e","task":"t","reward":0,"rollout_id":"r\udcfe"}`+"\n"+
		`{"env":"e","task":"t","reward":1,"rollout_id":"same"}`+"\n"+
		`{"env":"e","task":"t","reward":1,"rollout_id":"same"}`+"\n")
	e.write("rollouts/names.jsonl", `{"env":"e","task":"x\udcff","reward":1}`+"\n"+
		`{"env":"e\ud800","task":"t","reward":1}`+"\n")
	e.write("catalog/c.jsonl", `{"env":"e","task_id":"c\udcfe","text":"a"}`+"\n"+`{"env":"e","task_id":"ok","text":"b"}`+"\n")
	e.scan()
	c := e.counters()
	if c.Rollouts != 3 || c.Duplicates != 1 {
		t.Errorf("rollouts %d, duplicates %d; want 3 and 1 (only the repeated plain id is a duplicate)", c.Rollouts, c.Duplicates)
	}
	if got := strings.Join(e.tasks(), ","); got != "e/t=0,e/t=1,e/t=1" {
		t.Errorf("stored %s; want the three rollouts of e/t (rewards 0, 1, 1)", got)
	}
	q := e.reasons()
	want := []string{"catalog/c.jsonl@0:task not valid UTF-8", "rollouts/names.jsonl@0:task not valid UTF-8",
		"rollouts/names.jsonl@40:env not valid UTF-8"}
	if !equalSorted(q, want) {
		t.Errorf("quarantine %q; want %q", q, want)
	}
	if n := e.taskCount(); n != 2 {
		t.Errorf("%d tasks; want 2 (e/t and e/ok)", n)
	}
}
