package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testParts are the collaborators of the daemons under test: the real ones (package ingest and
// package schedule); the list is where a test would add its own.
func testParts() []Option { return nil }

// writeTestCatalog gives DIR a small catalogue (3 environments of 20 tasks) unless it has one,
// so that the real scheduler has tasks to choose from.
func writeTestCatalog(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, "catalog", "tasks.jsonl")
	if _, err := os.Stat(path); err == nil {
		return
	}
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, `{"env":"e%d","task_id":"t%d","text":"task number %d of kind %d"}`+"\n", i%3, i, i, i%7)
	}
	must(t, os.WriteFile(path, []byte(b.String()), 0o644))
}
