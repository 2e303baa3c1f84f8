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
