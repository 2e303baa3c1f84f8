package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneDatabaseForTwoExchangeDirs: one --db given to the runs of two exchange directories
// (ENVSCHED_DB exported once, say). The second directory's first request, named as the first
// one's was (every Python client starts at PREFIX-000001), was answered from the first
// directory's stored answer: tasks of the other catalogue, which the trainer cannot run. Now
// run, ingest and batch refuse such a database (exit 1) naming both folders, while the first
// directory moved elsewhere (the old path gone) keeps its database.
func TestOneDatabaseForTwoExchangeDirs(t *testing.T) {
	base, db, first, second := firstRunOfASharedDB(t)

	d := secondRunOfASharedDB(t, second, db)
	if !d.exited() {
		var b struct {
			Tasks []struct{ Env string } `json:"tasks"`
		}
		data, _ := os.ReadFile(filepath.Join(second, "batches", "step-000001.json"))
		must(t, json.Unmarshal(data, &b))
		t.Fatalf("the second directory was served from the first one's database: %+v", b.Tasks)
	}
	if code, log := d.wait(), d.stderr.String(); code != 1 || !strings.Contains(log, "was made for the exchange directory "+first) {
		t.Errorf("run: exit %d; want 1 naming %s\n%s", code, first, tail(log, 2000))
	}
	for _, cmd := range [][]string{{"ingest"}, {"batch", "--size", "1"}} {
		c := execCommand(append(cmd, "--dir", second, "--db", db))
		out, _ := c.CombinedOutput()
		if code := c.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(out), first) {
			t.Errorf("%s: exit %d; want 1 naming %s\n%s", cmd[0], code, first, out)
		}
	}

	// The first directory moved: its database follows it.
	moved := filepath.Join(base, "moved")
	must(t, os.Rename(first, moved))
	if out, err := execCommand([]string{"ingest", "--dir", moved, "--db", db}).CombinedOutput(); err != nil {
		t.Fatalf("ingest of the moved folder: %v\n%s", err, out)
	}
}

// firstRunOfASharedDB makes two exchange directories under base, first (env-0 … env-3) and
// second (one environment, "other"), and runs the daemon on first with --db base/shared.db until
// it has answered step-000001, then stops it.
func firstRunOfASharedDB(t *testing.T) (base, db, first, second string) {
	base = t.TempDir()
	db = filepath.Join(base, "shared.db")
	first, second = filepath.Join(base, "first"), filepath.Join(base, "second")
	ensureCatalog(t, first)
	must(t, os.MkdirAll(filepath.Join(second, "catalog"), 0o755))
	must(t, os.WriteFile(filepath.Join(second, "catalog", "tasks.jsonl"),
		[]byte(`{"env":"other","task_id":"o1","text":"x"}`+"\n"+`{"env":"other","task_id":"o2","text":"y"}`+"\n"), 0o644))
	d := start(t, first, opts{args: []string{"--db", db}})
	d.waitReady()
	writeRequest(t, first, "step-000001", `{"size": 2}`)
	waitBatch(t, d, "step-000001")
	if code := d.signal(os.Interrupt); code != 0 {
		t.Fatalf("exit %d", code)
	}
	return base, db, first, second
}

// secondRunOfASharedDB starts the daemon on second with --db db, writes step-000001 and waits
// until it is answered or the daemon has stopped.
func secondRunOfASharedDB(t *testing.T, second, db string) *daemon {
	d := start(t, second, opts{args: []string{"--db", db}})
	writeRequest(t, second, "step-000001", `{"size": 2}`)
	waitUntil(t, "the second daemon to answer or stop", func() bool {
		_, err := os.Stat(filepath.Join(second, "batches", "step-000001.json"))
		return err == nil || d.exited()
	})
	return d
}
