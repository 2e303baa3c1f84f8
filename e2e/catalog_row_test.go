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
	c := newCatalogDir(t)
	write, ingest, text, cat := c.write, c.ingest, c.text, c.cat
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

// catalogDir is an exchange directory whose catalogue a test writes, ingests with the real
// binary and reads back through `export --what tasks`.
type catalogDir struct {
	t        *testing.T
	dir, cat string
}

func newCatalogDir(t *testing.T) *catalogDir {
	dir := t.TempDir()
	c := &catalogDir{t: t, dir: dir, cat: filepath.Join(dir, "catalog")}
	must(t, os.MkdirAll(c.cat, 0o755))
	return c
}

// write writes catalog/name.
func (c *catalogDir) write(name, body string) {
	must(c.t, os.WriteFile(filepath.Join(c.cat, name), []byte(body), 0o644))
}

// ingest runs `envsched ingest` on the directory.
func (c *catalogDir) ingest() {
	c.t.Helper()
	if out, err := execCommand([]string{"ingest", "--dir", c.dir}).CombinedOutput(); err != nil {
		c.t.Fatalf("ingest: %v\n%s", err, out)
	}
}

// text is the stored text of task, as `export --what tasks` gives it.
func (c *catalogDir) text(task string) string {
	c.t.Helper()
	out, err := execCommand([]string{"export", "--dir", c.dir, "--what", "tasks"}).Output()
	if err != nil {
		c.t.Fatalf("export: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var raw map[string]any
		must(c.t, json.Unmarshal(sc.Bytes(), &raw))
		if id, _ := raw["task_id"].(string); id == task {
			s, _ := raw["text"].(string)
			return s
		}
	}
	c.t.Fatalf("no task %s in the export", task)
	return ""
}
