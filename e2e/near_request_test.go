package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestNearRequestNameIsLogged: a trainer that wrote requests/step-1.JSON (or step-1.jsonl) waited
// for ever and nothing said why: only ID.json is a request. Such a file is still never answered,
// but the log names it once, while a request beside it is answered as before.
func TestNearRequestNameIsLogged(t *testing.T) {
	dir := t.TempDir()
	d := start(t, dir, opts{})
	d.waitReady()
	for _, name := range []string{"step-1.JSON", "step-2.jsonl", "notes.txt"} {
		must(t, os.WriteFile(filepath.Join(dir, "requests", name), []byte(`{"size": 2}`), 0o644))
	}
	// A request in a subfolder is never read: the folder is named once (it was not at all).
	must(t, os.MkdirAll(filepath.Join(dir, "requests", "run1"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "requests", "run1", "step-3.json"), []byte(`{"size": 2}`), 0o644))
	writeRequest(t, dir, "good", `{"size": 2}`)
	waitAnswer(t, d, "good")
	waitUntil(t, "both near-request names in the log", func() bool {
		log := d.stderr.String()
		return strings.Contains(log, `"path":"requests/step-1.JSON"`) && strings.Contains(log, `"path":"requests/step-2.jsonl"`) &&
			strings.Contains(log, `"path":"requests/run1/"`)
	})
	writeRequest(t, dir, "good2", `{"size": 2}`)
	waitAnswer(t, d, "good2")
	log := d.stderr.String()
	if n := strings.Count(log, `"path":"requests/step-1.JSON"`); n != 1 {
		t.Errorf("step-1.JSON named %d times; want once", n)
	}
	if n := strings.Count(log, `"path":"requests/run1/"`); n != 1 {
		t.Errorf("requests/run1/ named %d times; want once", n)
	}
	if strings.Contains(log, "notes.txt") {
		t.Errorf("notes.txt (not named like a request) logged")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "batches", "*step-*")); len(left) != 0 {
		t.Errorf("answers for files that are not requests: %v", left)
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}
