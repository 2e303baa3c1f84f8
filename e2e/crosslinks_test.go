package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRolloutFileLinkedIntoCatalogBeforeStart (hostile15): a rollout file that already had a
// hard link in catalog/ when the daemon first saw it (both names there at its start) was
// tracked as a catalogue file, catalog/ being walked first: its lines were read as catalogue
// rows and none of its rollouts counted (rollouts_seen 0 for 4 lines), without a word. Its
// first line now decides: a rollout file is read under its rollouts/ name, and goes on so
// across appends and a restart; a catalogue file linked into rollouts/ stays a catalogue file,
// its rows not quarantined as rollouts.
func TestRolloutFileLinkedIntoCatalogBeforeStart(t *testing.T) {
	dir := t.TempDir()
	ensureCatalog(t, dir)
	must(t, os.MkdirAll(filepath.Join(dir, "rollouts", "run"), 0o755))
	var b strings.Builder
	for i := range 4 {
		b.WriteString(rolloutLine(fmt.Sprintf("r-%d", i), i))
	}
	roll := filepath.Join(dir, "rollouts", "run", "r.jsonl")
	must(t, os.WriteFile(roll, []byte(b.String()), 0o644))
	must(t, os.Link(roll, filepath.Join(dir, "catalog", "r.jsonl")))
	cat := filepath.Join(dir, "catalog", "more.jsonl")
	must(t, os.WriteFile(cat, []byte(`{"env":"env-9","task_id":"extra","text":"an extra task"}`+"\n"), 0o644))
	must(t, os.Link(cat, filepath.Join(dir, "rollouts", "more.jsonl")))

	d := start(t, dir, opts{})
	d.waitReady()
	writeRequest(t, dir, "one", `{"size": 2}`)
	if n := rolloutsSeen(t, waitBatch(t, d, "one")); n != 4 {
		t.Fatalf("rollouts_seen %d for the 4 lines of a rollout file also named in catalog/; want 4\n%s", n, tail(d.stderr.String(), 2000))
	}
	f, err := os.OpenFile(roll, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(rolloutLine("r-4", 4))
	must(t, err)
	must(t, f.Close())
	writeRequest(t, dir, "two", `{"size": 2}`)
	if n := rolloutsSeen(t, waitBatch(t, d, "two")); n != 5 {
		t.Fatalf("rollouts_seen %d after a fifth line; want 5", n)
	}
	writeRequest(t, dir, "three", `{"size": 1, "envs": ["env-9"]}`)
	if batch := waitBatch(t, d, "three"); !strings.Contains(string(batch), `"task_id":"extra"`) {
		t.Errorf("the catalogue file also named in rollouts/ gave no task env-9/extra: %s", batch)
	}
	if code := d.signal(os.Interrupt); code != 0 {
		t.Fatalf("exit %d", code)
	}
	d = start(t, dir, opts{})
	d.waitReady()
	writeRequest(t, dir, "four", `{"size": 2}`)
	if n := rolloutsSeen(t, waitBatch(t, d, "four")); n != 5 {
		t.Errorf("rollouts_seen %d after a restart; want 5", n)
	}
	st, err := readStatus(dir)
	must(t, err)
	if st.Quarantined != 0 {
		t.Errorf("quarantined %d; want 0 (the catalogue's rows are no rollouts, and are not read as such)", st.Quarantined)
	}
}
