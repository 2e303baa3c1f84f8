package ingest

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/envsched/envsched/record"
)

// TestWholeCatalogueFileReadOnce: a catalogue file read whole (a .parquet file, or a stray
// notes.txt) is read, and its rows stored or the file quarantined, once; it is read again only
// when it changes. Before, a bad file was quarantined again at the first scan after it settled
// and at every restart, so `quarantined` grew with each restart of the daemon.
func TestWholeCatalogueFileReadOnce(t *testing.T) {
	calls := map[string]int{}
	read := func(path string) ([]record.Task, error) {
		calls[path]++
		return readStray(path)
	}
	e := newEnv(t, Options{ReadCatalogFile: read, settleAfter: time.Millisecond})
	e.write("catalog/notes.txt", "remember to buy milk\n")
	e.write("catalog/broken.parquet", "PAR1 not really parquet PAR1")
	e.write("catalog/tasks.jsonl", `{"env":"e","task":"t"}`+"\n")
	e.scan()
	time.Sleep(10 * time.Millisecond) // both files settle
	e.scan()
	e.scan()
	e.reopen() // a restart keeps no memory of settled files
	e.scan()
	e.scan()
	if q := e.reasons(); len(q) != 2 {
		t.Errorf("quarantine = %q; want one entry per file", q)
	}
	if c := e.counters(); c.Quarantined != 2 {
		t.Errorf("quarantined = %d; want 2", c.Quarantined)
	}
	for p, n := range calls {
		if n != 1 {
			t.Errorf("%s read %d times; want once", p, n)
		}
	}

	// A change is read again: the file rewritten (another size) is quarantined again.
	e.write("catalog/notes.txt", "remember to buy milk and eggs\n")
	e.scan()
	q := e.reasons()
	if len(q) != 3 || !strings.HasPrefix(q[2], "catalog/notes.txt@0:") {
		t.Fatalf("after a rewrite, quarantine = %q; want notes.txt again", q)
	}
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(e.path("catalog/broken.parquet"), future, future); err != nil {
		t.Fatal(err)
	}
	e.scan()
	if n := calls[e.path("catalog/broken.parquet")]; n != 2 {
		t.Errorf("broken.parquet read %d times after its modification time changed; want 2", n)
	}
}
