package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestTaskRowFollowsTheFilesThatListIt: a task listed by two catalogue files takes the row read
// last; once that file is deleted (or rewritten without the task), the task's text is the one
// the files listing it now give. It kept the text of the deleted file for good (restarts
// included), so its features and graph edges came from a row no catalogue file held.
func TestTaskRowFollowsTheFilesThatListIt(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "catalog")
	must(t, os.MkdirAll(cat, 0o755))
	write := func(name, body string) { must(t, os.WriteFile(filepath.Join(cat, name), []byte(body), 0o644)) }
	ingest := func() {
		t.Helper()
		if out, err := execCommand([]string{"ingest", "--dir", dir}).CombinedOutput(); err != nil {
			t.Fatalf("ingest: %v\n%s", err, out)
		}
	}
	text := func(task string) string {
		t.Helper()
		out, err := execCommand([]string{"export", "--dir", dir, "--what", "tasks"}).Output()
		if err != nil {
			t.Fatalf("export: %v", err)
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			var row struct{ TaskID, Text string }
			var raw map[string]any
			must(t, json.Unmarshal(sc.Bytes(), &raw))
			row.TaskID, _ = raw["task_id"].(string)
			row.Text, _ = raw["text"].(string)
			if row.TaskID == task {
				return row.Text
			}
		}
		t.Fatalf("no task %s in the export", task)
		return ""
	}
	write("a.jsonl", `{"env":"e","task_id":"t1","text":"alpha"}`+"\n"+`{"env":"e","task_id":"t2","text":"two"}`+"\n")
	ingest()
	write("b.jsonl", `{"env":"e","task_id":"t1","text":"beta"}`+"\n")
	ingest()
	if got := text("t1"); got != "beta" {
		t.Fatalf("t1 %q with b.jsonl read last; want beta", got)
	}
	must(t, os.Remove(filepath.Join(cat, "b.jsonl")))
	ingest()
	if got := text("t1"); got != "alpha" {
		t.Errorf("t1 %q once b.jsonl is deleted; want alpha, the row of a.jsonl, the only file listing it", got)
	}
	write("c.jsonl", `{"env":"e","task_id":"t1","text":"gamma"}`+"\n")
	ingest()
	write("c.jsonl", `{"env":"e","task_id":"t7","text":"seven"}`+"\n") // rewritten without t1
	ingest()
	if got := text("t1"); got != "alpha" {
		t.Errorf("t1 %q once c.jsonl is rewritten without it; want alpha", got)
	}
}
