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
	e := newEnv(t, Options{ReadCatalogFile: readStray, settleAfter: time.Millisecond})
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

	// A change is read again: the file rewritten (another size), or given another
	// modification time, is quarantined again.
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
	e.scan()
	q = e.reasons()
	if len(q) != 4 || !strings.HasPrefix(q[3], "catalog/broken.parquet@0:") {
		t.Errorf("after a new modification time, quarantine = %q; want broken.parquet once more", q)
	}
}

// TestLongGroupIDIsQuarantined: the database keys groups by the group id, and a bbolt key is at
// most 32 KiB. A rollout line with a 40 KB group_id made the commit fail ("key too large"): the
// daemon stopped, and stopped again at every start on the same line. It is a bad line now, and
// the lines around it are stored.
func TestLongGroupIDIsQuarantined(t *testing.T) {
	e := newEnv(t, Options{})
	e.write("rollouts/r.jsonl", `{"env":"e","task":"1","reward":1}`+"\n"+
		`{"env":"e","task":"1","reward":1,"group_id":"`+strings.Repeat("g", 40000)+`"}`+"\n"+
		`{"env":"e","task":"2","reward":0,"group_id":"`+strings.Repeat("h", 4096)+`"}`+"\n")
	e.scan()
	if got := e.tasks(); len(got) != 2 {
		t.Errorf("rollouts %q; want the two lines around the long group id", got)
	}
	if q := e.reasons(); len(q) != 1 || !strings.HasSuffix(q[0], record.ReasonGroupTooLong) {
		t.Errorf("quarantine %q; want the long group id's line", q)
	}
}
