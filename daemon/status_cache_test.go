package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStatusWithNothingCommittedReadsNoEnvironment: every heartbeat read every environment's
// statistics from the database and summed them, with nothing changed since the last one:
// 100 ms of CPU every 2 s at 200,000 environments of one task each. A status now reads them
// only when a commit moved the database's generation; its counters are the same either way.
func TestStatusWithNothingCommittedReadsNoEnvironment(t *testing.T) {
	dir := t.TempDir()
	var cat strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&cat, `{"env":"env-%d","task_id":"t","text":"task %d"}`+"\n", i, i)
	}
	if err := os.MkdirAll(filepath.Join(dir, "catalog"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "catalog", "tasks.jsonl"), []byte(cat.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := New(testConfig(dir, false), nil, testParts()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.ingestAll(context.Background(), "test"); err != nil {
		t.Fatal(err)
	}
	first, err := d.status()
	if err != nil || first.Envs != 3000 || first.Tasks != 3000 {
		t.Fatalf("status %+v, %v; want 3000 environments and tasks", first, err)
	}
	allocs := testing.AllocsPerRun(5, func() {
		if s, err := d.status(); err != nil || s.Envs != 3000 || s.Tasks != 3000 {
			t.Fatalf("status %+v, %v", s, err)
		}
	})
	if allocs > 300 {
		t.Errorf("a status with nothing committed made %.0f allocations; want a few (no environment read)", allocs)
	}
	writeRequest(t, dir, "r1.json", `{"size": 2}`)
	if _, err := d.handle("r1.json", timing{}); err != nil {
		t.Fatal(err)
	}
	if s, err := d.status(); err != nil || s.RequestsAnswered != 1 || s.LastRequest == nil || *s.LastRequest != "r1" {
		t.Errorf("status after an answer: %+v, %v; want it counted", s, err)
	}
}
