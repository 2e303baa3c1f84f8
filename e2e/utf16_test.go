package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A rollout file written as UTF-16 (Windows PowerShell 5's > and Out-File) is quarantined whole
// by the real binary, once, with a reason that says UTF-16; every line of it was quarantined as
// "line cut short by a crash (zeros follow it)".
func TestUTF16RolloutFileSaysSo(t *testing.T) {
	dir := t.TempDir()
	ensureCatalog(t, dir)
	var b strings.Builder
	b.WriteString("\xff\xfe")
	for _, c := range strings.Repeat(`{"env":"e0","task_id":"t1","reward":1}`+"\r\n", 3) {
		b.WriteString(string(c) + "\x00")
	}
	must(t, os.MkdirAll(filepath.Join(dir, "rollouts"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "rollouts", "ps.jsonl"), []byte(b.String()), 0o644))
	for range 2 {
		if out, err := execCommand([]string{"ingest", "--dir", dir}).CombinedOutput(); err != nil {
			t.Fatalf("ingest: %v\n%s", err, out)
		}
	}
	out, err := execCommand([]string{"export", "--dir", dir, "--what", "quarantine"}).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "a UTF-16 file") || !strings.Contains(lines[0], "rollouts/ps.jsonl") {
		t.Errorf("quarantine of a UTF-16 rollout file:\n%s", out)
	}
}
