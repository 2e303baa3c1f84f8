package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// An empty request file is answered with every default only once it has been left alone for
// daemon.EmptySettle (2 s): a file created under its final name is empty until its writer
// writes, and answered at once it got the default batch for good (the same ID always gets the
// same answer) while the same writer's half-written JSON gets an error file and is served once
// complete. Its siblings: a request of white space only waits the same way, and both, left
// alone, get the default batch, as does one whose times are an hour ahead of the clock.
func TestEmptyRequestWaitsForItsWriter(t *testing.T) {
	dir := t.TempDir()
	d := start(t, dir, opts{args: []string{"--batch-size", "2"}})
	d.waitReady()
	reqs := filepath.Join(dir, "requests")
	slow := filepath.Join(reqs, "slow.json")
	f, err := os.Create(slow) // the final name at once, written 300 ms later
	must(t, err)
	must(t, os.WriteFile(filepath.Join(reqs, "empty.json"), nil, 0o644))
	must(t, os.WriteFile(filepath.Join(reqs, "blank.json"), []byte(" \n\t\n"), 0o644))
	// its times an hour ahead (a clock set back since, or a writer's skewed clock on NFS): the
	// wait is bounded by when the daemon first saw it empty
	future := filepath.Join(reqs, "future.json")
	must(t, os.WriteFile(future, nil, 0o644))
	must(t, os.Chtimes(future, time.Now().Add(time.Hour), time.Now().Add(time.Hour)))
	created := time.Now()
	time.Sleep(300 * time.Millisecond)
	_, err = f.WriteString(`{"size": 3}`)
	must(t, err)
	must(t, f.Close())
	if got := batchSize(t, waitBatch(t, d, "slow")); got != 3 {
		t.Errorf("request written 300 ms after its creation: size %d; want 3 (it was answered empty, with the default)", got)
	}
	for _, id := range []string{"empty", "blank", "future"} {
		b := waitBatch(t, d, id)
		if got := batchSize(t, b); got != 2 {
			t.Errorf("%s request left alone: size %d; want the default 2", id, got)
		}
		if fi, err := os.Stat(filepath.Join(dir, "batches", id+".json")); err == nil && fi.ModTime().Sub(created) < 1500*time.Millisecond {
			t.Errorf("%s request answered %v after it was written; want it left alone about 2 s first", id, fi.ModTime().Sub(created))
		}
	}
}

func batchSize(t *testing.T, batch []byte) int {
	t.Helper()
	var b struct {
		Size  int               `json:"size"`
		Tasks []json.RawMessage `json:"tasks"`
	}
	if err := json.Unmarshal(batch, &b); err != nil || len(b.Tasks) != b.Size {
		t.Fatalf("batch %s: %v", batch, err)
	}
	return b.Size
}
