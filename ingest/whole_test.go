package ingest

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
)

// TestWholeCatalogueFileReadOnce: a catalogue file read whole (a .parquet file, or a stray
// notes.txt) is read, and its rows stored or the file quarantined, once; it is read again only
// when its bytes change. Before, a bad file was quarantined again at the first scan after it settled
// and at every restart, so `quarantined` grew with each restart of the daemon.
func TestWholeCatalogueFileReadOnce(t *testing.T) {
	clock := &testClock{at: time.Now()}
	e := newEnv(t, Options{ReadCatalogFile: readStray, settleAfter: time.Millisecond, now: clock.now})
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

	// A change is read again: the file rewritten (another size), or with other bytes of the
	// same size and another modification time. Another modification time alone, the bytes the
	// same, reads nothing again (their hash says so; it was read again, and quarantined once more).
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
	clock.advance(hashEvery)
	e.scan()
	e.scan()
	if q = e.reasons(); len(q) != 3 {
		t.Errorf("after a new modification time, the bytes the same, quarantine = %q; want nothing new", q)
	}
	e.write("catalog/broken.parquet", "PAR1 not really parquet PAR2")
	if err := os.Chtimes(e.path("catalog/broken.parquet"), future, future); err != nil {
		t.Fatal(err)
	}
	clock.advance(hashEvery)
	e.scan()
	e.scan()
	q = e.reasons()
	if len(q) != 4 || !strings.HasPrefix(q[3], "catalog/broken.parquet@0:") {
		t.Errorf("after other bytes of the same size, quarantine = %q; want broken.parquet once more", q)
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

// TestWholeFileRewrittenSameSizeAndTime: a catalogue file read whole (a .parquet file) rewritten
// in place with the same size, its modification time set back (touch -r, rsync -t) and its first
// and last 64 bytes unchanged is read again: its change time moved and its hash differs. Before,
// size and time alone said unchanged, and the new rows were never read. Its siblings: a chmod
// (change time moved, bytes the same) reads nothing again, and neither does a restart. (A hash
// is taken only when hashDue: the test's clock moves on before the rewrite is looked at.)
func TestWholeFileRewrittenSameSizeAndTime(t *testing.T) {
	reads := 0
	readNames := func(path string) ([]record.Task, error) {
		reads++
		data, err := os.ReadFile(path)
		var out []record.Task
		for _, l := range strings.Split(string(data), "\n") {
			if env, task, ok := strings.Cut(l, " "); ok && len(l) < 20 {
				out = append(out, record.Task{Env: env, Task: task})
			}
		}
		return out, err
	}
	clock := &testClock{at: time.Now()}
	e := newEnv(t, Options{ReadCatalogFile: readNames, settleAfter: time.Millisecond, now: clock.now})
	edge := strings.Repeat("x", 70)
	e.write("catalog/t.parquet", edge+"\ne a\ne b\n"+edge+"\n")
	e.scan()
	fi, err := os.Stat(e.path("catalog/t.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if n := e.taskCount(); n != 2 || reads != 1 {
		t.Fatalf("%d tasks after %d reads; want 2 after 1", n, reads)
	}
	time.Sleep(10 * time.Millisecond) // settled
	e.scan()
	if err := os.Chmod(e.path("catalog/t.parquet"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.scan()
	e.reopen()
	e.scan()
	if reads != 1 {
		t.Errorf("a chmod and a restart read the file %d times; want once in all", reads)
	}
	e.write("catalog/t.parquet", edge+"\ne a\ne c\n"+edge+"\n") // same size, b renamed c
	if err := os.Chtimes(e.path("catalog/t.parquet"), fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	clock.advance(hashEvery) // the restart's scan hashed it a moment ago
	e.scan()
	if n := e.taskCount(); n != 3 || reads != 2 {
		t.Errorf("after a rewrite with the same size and time: %d tasks after %d reads; want 3 (c new) after 2", n, reads)
	}
	e.reopen()
	e.scan()
	if reads != 2 {
		t.Errorf("a restart read the rewritten file again (%d reads)", reads)
	}
}

// testClock is a clock that moves only when told (Options.now).
type testClock struct{ at time.Time }

func (c *testClock) now() time.Time          { return c.at }
func (c *testClock) advance(d time.Duration) { c.at = c.at.Add(d) }

// TestWholeFileChurnIsHashedAtMostOnceASecond: a catalogue file read whole whose change time
// churns (chmod in a loop) or whose modification time does (touch in a loop), its bytes the
// same, is hashed at most once per hashEvery (or ten times as long as its hash took), not at
// every scan: every scan, and so every request's barrier, hashed it whole (a 1 GB file: 0.9 s
// per request, a core busy). It is never read again for it, and a rewrite with the same size
// and time made during the churn is read once the hash is due. The bytes the process read
// (rchar) show the hashes.
func TestWholeFileChurnIsHashedAtMostOnceASecond(t *testing.T) {
	const size = 32 << 20
	for _, churn := range []string{"chmod", "touch"} {
		t.Run(churn, func(t *testing.T) {
			reads := 0
			readOnce := func(string) ([]record.Task, error) { reads++; return []record.Task{{Env: "e", Task: "t"}}, nil }
			clock := &testClock{at: time.Now()}
			e := newEnv(t, Options{ReadCatalogFile: readOnce, settleAfter: time.Millisecond, now: clock.now})
			body := strings.Repeat("x", size)
			e.write("catalog/big.parquet", body)
			e.scan()
			fi, err := os.Stat(e.path("catalog/big.parquet"))
			if err != nil {
				t.Fatal(err)
			}
			before := readBytes(t)
			for i := range 40 {
				switch churn {
				case "chmod":
					err = os.Chmod(e.path("catalog/big.parquet"), os.FileMode(0o600+i%2*0o40))
				case "touch":
					at := fi.ModTime().Add(time.Duration(i+1) * time.Second)
					err = os.Chtimes(e.path("catalog/big.parquet"), at, at)
				}
				if err != nil {
					t.Fatal(err)
				}
				e.scan()
				clock.advance(hashEvery / 10) // 40 scans over 4 s of the clock: 4 hashes due
			}
			if read := readBytes(t) - before; read > 6*size {
				t.Errorf("40 scans of a churned file read %d bytes: %d hashes of its %d; want at most 4-5",
					read, read/size, size)
			}
			if reads != 1 {
				t.Errorf("the churned file was read %d times; want once", reads)
			}
			// A rewrite during the churn, same size, time set back: read once the hash is due.
			e.write("catalog/big.parquet", strings.Repeat("y", size))
			if err := os.Chtimes(e.path("catalog/big.parquet"), fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
			clock.advance(hashEvery)
			e.scan()
			if reads != 2 {
				t.Errorf("a rewrite with the same size and time: %d reads; want 2", reads)
			}
		})
	}
}

// TestCatalogueRenameReadsNoListAgain: a catalogue file renamed inside catalog/ to a name of its
// format (a.jsonl to b.jsonl, and back: a rename loop) lists the same tasks, so the scans that
// see it read no catalogue again: each read every catalogue file whole to list the tasks (300,000
// tasks: 2 s of every request's barrier during the loop). The bytes the process read show it.
// Its siblings still change the list: a file renamed over another (whose tasks are retired), and
// a file removed.
func TestCatalogueRenameReadsNoListAgain(t *testing.T) {
	e := newEnv(t, Options{ReadCatalogFile: readStray})
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, `{"env":"e","task":"t%d","text":"some words of task %d"}`+"\n", i, i)
	}
	e.write("catalog/a.jsonl", b.String())
	e.write("catalog/other.jsonl", `{"env":"e","task":"x"}`+"\n")
	e.scan()
	size := int64(b.Len())
	before := readBytes(t)
	for i := range 10 {
		from, to := "catalog/a.jsonl", "catalog/b.jsonl"
		if i%2 == 1 {
			from, to = to, from
		}
		if err := os.Rename(e.path(from), e.path(to)); err != nil {
			t.Fatal(err)
		}
		e.scan()
	}
	if read := readBytes(t) - before; read >= size {
		t.Errorf("10 renames read %d bytes, the catalogue holding %d: the list was read again", read, size)
	}
	if r := e.retired(); len(r) != 0 {
		t.Errorf("renames retired %d tasks", len(r))
	}
	if err := os.Rename(e.path("catalog/other.jsonl"), e.path("catalog/a.jsonl")); err != nil {
		t.Fatal(err)
	}
	e.scan()
	if r := e.retired(); len(r) != 20000 || !r[storage.TaskKey{Env: "e", Task: "t7"}] || r[storage.TaskKey{Env: "e", Task: "x"}] {
		t.Errorf("a file renamed over the catalogue: %d retired; want its 20000 tasks", len(r))
	}
	if err := os.Remove(e.path("catalog/a.jsonl")); err != nil {
		t.Fatal(err)
	}
	e.write("catalog/new.jsonl", `{"env":"e","task":"y"}`+"\n")
	e.scan()
	if r := e.retired(); !r[storage.TaskKey{Env: "e", Task: "x"}] {
		t.Errorf("a removed file's task is not retired")
	}
}

// retired returns the retired tasks.
func (e *env) retired() map[storage.TaskKey]bool {
	e.t.Helper()
	var out map[storage.TaskKey]bool
	if err := e.db.View(func(r *storage.Reader) error {
		var err error
		out, err = r.Retired()
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
	return out
}
