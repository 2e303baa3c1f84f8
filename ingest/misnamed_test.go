package ingest

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// TestMisnamedRolloutFileIsNamedInTheLog: a trainer writing rollouts/run.json (or RUN.JSONL,
// run.jsonl.gz) saw none of its rollouts count and nothing in the log. Such a file is still not
// read (every name in rollouts/ but *.jsonl is ignored), but the log names it once.
func TestMisnamedRolloutFileIsNamedInTheLog(t *testing.T) {
	var log bytes.Buffer
	e := newEnv(t, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	line := `{"env":"e","task":"1","reward":1}` + "\n"
	for _, name := range []string{"run.json", "sub/RUN.JSONL", "run.jsonl.gz", "notes.txt", "run.jsonl", "old.jsonl.1", "old.jsonl-20261204"} {
		e.write("rollouts/"+name, line)
	}
	for range 3 {
		e.scan()
	}
	if got := e.counters().Rollouts; got != 1 {
		t.Errorf("%d rollouts; want 1 (only run.jsonl is read)", got)
	}
	for _, name := range []string{"rollouts/run.json", "rollouts/sub/RUN.JSONL", "rollouts/run.jsonl.gz",
		"rollouts/old.jsonl.1", "rollouts/old.jsonl-20261204"} { // the last two: rotated files
		if n := strings.Count(log.String(), "path="+name+"\n"); n != 1 {
			t.Errorf("%s named %d times in the log; want once:\n%s", name, n, log.String())
		}
	}
	if strings.Contains(log.String(), "notes.txt") {
		t.Errorf("notes.txt (not a rollout file's name) logged:\n%s", log.String())
	}
}

// TestMisnamedRolloutFileHintedIsNamedInTheLog: a misnamed rollout file that reaches the
// ingester as a hint (ScanPaths: the daemon's file events and its periodic listings while it
// runs) is named as one found by a full listing is, once whichever found it first; a write in
// progress (.run.json, run.json.tmp) and other names are not. Hinted alone, it was skipped
// without a word.
func TestMisnamedRolloutFileHintedIsNamedInTheLog(t *testing.T) {
	var log bytes.Buffer
	e := newEnv(t, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	line := `{"env":"e","task":"1","reward":1}` + "\n"
	names := []string{"run.json", "sub/RUN.JSONL", "run.jsonl.gz", "notes.txt", ".run.json", "run.json.tmp", ".sub/run.json"}
	var paths []string
	for _, name := range names {
		e.write("rollouts/"+name, line)
		paths = append(paths, "rollouts/"+name)
	}
	named := func(when string) {
		t.Helper()
		for _, name := range []string{"rollouts/run.json", "rollouts/sub/RUN.JSONL", "rollouts/run.jsonl.gz"} {
			if n := strings.Count(log.String(), "path="+name+"\n"); n != 1 {
				t.Errorf("%s: %s named %d times in the log; want once:\n%s", when, name, n, log.String())
			}
		}
	}
	for range 2 {
		if _, err := e.in.ScanPaths(context.Background(), paths); err != nil {
			t.Fatal(err)
		}
	}
	named("hinted twice")
	e.scan()
	named("and listed")
	for _, name := range []string{"notes.txt", ".run.json", "run.json.tmp", ".sub"} {
		if strings.Contains(log.String(), name) {
			t.Errorf("%s logged:\n%s", name, log.String())
		}
	}
}

// TestNestedCatalogueIsNamedInTheLog: catalogue files in a subfolder of catalog/ are not read
// (PROTOCOL.md, section 1), and the log now says so, once per subfolder, whether a full listing
// or a hint finds them; a subfolder of other files is not named. A catalogue put in
// catalog/v2/ was ignored without a word: its tasks were never known.
func TestNestedCatalogueIsNamedInTheLog(t *testing.T) {
	var log bytes.Buffer
	e := newEnv(t, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	row := `{"env":"e","task_id":"1","text":"x"}` + "\n"
	for _, name := range []string{"v2/tasks.jsonl", "v2/more.jsonl", "v2/deep/x.parquet", "notes/readme.txt", ".old/tasks.jsonl"} {
		e.write("catalog/"+name, row)
	}
	e.scan()
	e.write("catalog/v3/TASKS.JSONL", row)
	if _, err := e.in.ScanPaths(context.Background(), []string{"catalog/v3/TASKS.JSONL"}); err != nil {
		t.Fatal(err)
	}
	e.scan()
	if got := len(e.tasks()); got != 0 {
		t.Errorf("%d tasks known; want none (subfolders are not read)", got)
	}
	for _, folder := range []string{"catalog/v2/", "catalog/v3/"} {
		if n := strings.Count(log.String(), "path="+folder+" "); n != 1 {
			t.Errorf("%s named %d times in the log; want once:\n%s", folder, n, log.String())
		}
	}
	for _, folder := range []string{"catalog/notes", "catalog/.old", "catalog/v2/deep"} {
		if strings.Contains(log.String(), "path="+folder) {
			t.Errorf("%s named in the log:\n%s", folder, log.String())
		}
	}
}
