package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/envsched/envsched/daemon"
	"github.com/envsched/envsched/propagate"
)

// TestStatusShowsEveryCountFactor: README says `envsched status` prints "the measured factors
// of the corrections"; it printed rechosen_factor and never_tried_factor but not
// rechosen_low_factor, which status.json, stats, the report and the metrics all carry.
func TestStatusShowsEveryCountFactor(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().UTC().Format(time.RFC3339)
	s := daemon.Status{Version: "test", PID: os.Getpid(), StartedAt: now, UpdatedAt: now, DB: "x.db", WatchMode: "notify"}
	s.Corrections = &propagate.Corrections{RechosenFactor: 0.9364, NeverTriedFactor: 1.5984, RechosenLowFactor: 0.9846,
		Dispersion: map[string]propagate.Correction{"never_tried": {Scale: 1}}, State: "stored"}
	data, _ := json.Marshal(s)
	if err := os.WriteFile(filepath.Join(dir, "status.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := opsApp(t, "status", "--dir", dir)
	want := "rechosen_factor 0.9364, never_tried_factor 1.5984, rechosen_low_factor 0.9846, never_tried scale 1"
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("exit %d (%s); want the corrections line to hold %q:\n%s", code, errOut, want, out)
	}
}

// TestStatusNamesAnUnreadableFileOnce: a status.json that cannot be read (a FIFO, a folder, a
// file over 16 MiB) is named once in the message; it said "read PATH: PATH is not a regular
// file" and "read PATH: read PATH: 17825792 bytes", the path twice.
func TestStatusNamesAnUnreadableFileOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "status.json")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := opsApp(t, "status", "--dir", dir)
	if code != exitError || strings.Count(errOut, path) != 1 || !strings.Contains(errOut, "not a regular file") {
		t.Errorf("status.json a folder: exit %d, %q; want exit 1 naming %s once", code, errOut, path)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 17<<20); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = opsApp(t, "status", "--dir", dir)
	if code != exitError || strings.Count(errOut, path) != 1 || !strings.Contains(errOut, "more than the 16777216") {
		t.Errorf("status.json of 17 MiB: exit %d, %q; want exit 1 naming %s once", code, errOut, path)
	}
}
