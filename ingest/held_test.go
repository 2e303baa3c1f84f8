package ingest

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
)

// TestCatalogueOfBadRowsRetiresNothing: a catalogue file whose rows are all bad (a JSON lines
// file of garbage, one the trainer wrote in a wrong format, a parquet file of other columns)
// was taken for one that lists no task: every task it had listed was retired, as if the trainer
// had removed them. Now such a file, and one that lists no task at all (emptied to be rewritten
// in place), holds back the tasks it listed until it lists some again, across a restart, and
// says so once in the log; the tasks other files leave out retire as usual, and a file with good
// rows for some of its tasks is an edit (the others retire).
func TestCatalogueOfBadRowsRetiresNothing(t *testing.T) {
	var logs bytes.Buffer
	e := newEnv(t, Options{ReadCatalogFile: readStray, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	key := func(task string) storage.TaskKey { return storage.TaskKey{Env: "e", Task: task} }
	want := func(what string, tasks ...string) {
		t.Helper()
		w := map[storage.TaskKey]bool{}
		for _, task := range tasks {
			w[key(task)] = true
		}
		if r := e.retired(); !reflect.DeepEqual(r, w) && (len(r) != 0 || len(w) != 0) {
			t.Fatalf("%s: retired %v; want %v", what, r, w)
		}
	}
	e.write("catalog/a.jsonl", `{"env":"e","task":"a1"}`+"\n"+`{"env":"e","task":"a2"}`+"\n"+`{"env":"e","task":"a3"}`+"\n")
	e.write("catalog/b.jsonl", `{"env":"e","task":"b1"}`+"\n"+`{"env":"e","task":"b2"}`+"\n")
	e.replace("catalog/c.parquet", parquetOf(t, "c1", "c2"))
	e.scan()

	e.replace("catalog/a.jsonl", "env,task\ne,a1\ne,a2\n") // a CSV under the name: every line bad
	e.replace("catalog/b.jsonl", `{"env":"e","task":"b2"}`+"\n")
	e.scan()
	want("a.jsonl replaced by bad rows", "b1")
	e.reopen()
	e.append("catalog/a.jsonl", "e,a3\n")
	e.replace("catalog/b.jsonl", `{"env":"e","task":"b3"}`+"\n")
	e.scan()
	want("more bad rows after a restart", "b1", "b2")
	if n := strings.Count(logs.String(), "catalogue file has bad rows and no good one"); n != 2 {
		t.Errorf("the log says %d times that a.jsonl has only bad rows; want once per process (2):\n%s", n, logs.String())
	}

	e.write("catalog/a.jsonl", "") // emptied in place, to be written again
	e.scan()
	want("a.jsonl emptied", "b1", "b2")
	e.write("catalog/a.jsonl", `{"env":"e","ta`) // no whole line yet
	e.scan()
	want("a.jsonl half a line", "b1", "b2")

	type other struct {
		Name string `parquet:"name"`
	}
	var pq bytes.Buffer
	w := parquet.NewGenericWriter[other](&pq)
	if _, err := w.Write([]other{{"c1"}, {"c2"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	e.replace("catalog/c.parquet", pq.String()) // parquet, but no env or task in any row
	e.scan()
	want("c.parquet of other columns", "b1", "b2")
	e.reopen()
	e.replace("catalog/b.jsonl", `{"env":"e","task":"b4"}`+"\n")
	e.scan()
	want("c.parquet of other columns, after a restart", "b1", "b2", "b3")

	e.write("catalog/a.jsonl", `{"env":"e","task":"a1"}`+"\n"+"garbage\n") // good rows for a1 only: an edit
	e.replace("catalog/c.parquet", parquetOf(t, "c2"))
	e.scan()
	want("a.jsonl lists a1, c.parquet c2", "b1", "b2", "b3", "a2", "a3", "c1")
	if !strings.Contains(logs.String(), "catalogue file lists tasks again") {
		t.Errorf("the log does not say when a file lists tasks again:\n%s", logs.String())
	}
}

// TestRenamedCatalogueHoldsItsTasks: the tasks a file holds back are those it listed when last
// read, wherever it has moved since: a file renamed inside catalog/ (which lists nothing again)
// and then rewritten with bad rows holds its tasks, not another's.
func TestRenamedCatalogueHoldsItsTasks(t *testing.T) {
	e := newEnv(t, Options{ReadCatalogFile: readStray})
	e.write("catalog/a.jsonl", `{"env":"e","task":"a1"}`+"\n")
	e.write("catalog/b.jsonl", `{"env":"e","task":"b1"}`+"\n"+`{"env":"e","task":"b2"}`+"\n")
	e.scan()
	if err := os.Rename(e.path("catalog/a.jsonl"), e.path("catalog/z.jsonl")); err != nil {
		t.Fatal(err)
	}
	e.scan()
	e.reopen()
	e.write("catalog/z.jsonl", "not json\n")
	e.replace("catalog/b.jsonl", `{"env":"e","task":"b2"}`+"\n")
	e.scan()
	if r, want := e.retired(), map[storage.TaskKey]bool{{Env: "e", Task: "b1"}: true}; !reflect.DeepEqual(r, want) {
		t.Fatalf("retired %v; want %v", r, want)
	}
}

// TestCatalogueUnreadableNowHoldsOnlyItsTasks: a catalogue file that cannot be read when the list
// is made (permission denied, an I/O error) held back every retirement, of every file; it now
// holds back its own tasks only. Here a parquet file read by an earlier process fails to read.
func TestCatalogueUnreadableNowHoldsOnlyItsTasks(t *testing.T) {
	e := newEnv(t, Options{ReadCatalogFile: readStray})
	e.replace("catalog/a.parquet", parquetOf(t, "a1", "a2"))
	e.write("catalog/b.jsonl", `{"env":"e","task":"b1"}`+"\n"+`{"env":"e","task":"b2"}`+"\n")
	e.scan()
	e.opt.ReadCatalogFile = func(path string) ([]record.Task, error) {
		return nil, fmt.Errorf("read %s: input/output error", path)
	}
	e.reopen()
	e.replace("catalog/b.jsonl", `{"env":"e","task":"b2"}`+"\n")
	e.scan()
	if r, want := e.retired(), map[storage.TaskKey]bool{{Env: "e", Task: "b1"}: true}; !reflect.DeepEqual(r, want) {
		t.Fatalf("retired %v; want %v", r, want)
	}
}

// TestBadFromTheStartHoldsNothing: a catalogue file that was never read well (bad rows from its
// first scan on) listed nothing, so it holds nothing back: the other files' tasks retire.
func TestBadFromTheStartHoldsNothing(t *testing.T) {
	e := newEnv(t, Options{ReadCatalogFile: readStray})
	e.write("catalog/bad.jsonl", "env,task\ne,x\n")
	e.write("catalog/b.jsonl", `{"env":"e","task":"b1"}`+"\n"+`{"env":"e","task":"b2"}`+"\n")
	e.scan()
	e.reopen()
	e.replace("catalog/b.jsonl", `{"env":"e","task":"b2"}`+"\n")
	e.scan()
	if r, want := e.retired(), map[storage.TaskKey]bool{{Env: "e", Task: "b1"}: true}; !reflect.DeepEqual(r, want) {
		t.Fatalf("retired %v; want %v", r, want)
	}
}

// TestEmptiedCatalogueRewrittenRetires: a catalogue file emptied in place and then written again
// with fewer tasks (Python's open(path, "w") then write, a scan between the two) is an edit once
// its rows are read: the tasks it no longer lists retire. The rows read into a file that listed
// nothing were taken for an append, which retires nothing and did not look at the lists again:
// the tasks it left out stayed in service until some other catalogue file changed (hostile14a:
// a request for 21 of the 20 tasks left was answered with tasks of the removed environments).
// Likewise a file held for bad rows that gets good ones appended.
func TestEmptiedCatalogueRewrittenRetires(t *testing.T) {
	e := newEnv(t, Options{ReadCatalogFile: readStray})
	rows := func(tasks ...string) string {
		var b strings.Builder
		for _, task := range tasks {
			fmt.Fprintf(&b, `{"env":"e","task":%q}`+"\n", task)
		}
		return b.String()
	}
	want := func(what string, tasks ...string) {
		t.Helper()
		w := map[storage.TaskKey]bool{}
		for _, task := range tasks {
			w[storage.TaskKey{Env: "e", Task: task}] = true
		}
		if r := e.retired(); !reflect.DeepEqual(r, w) && (len(r) != 0 || len(w) != 0) {
			t.Fatalf("%s: retired %v; want %v", what, r, w)
		}
	}
	e.write("catalog/a.jsonl", rows("a1", "a2", "a3", "a4"))
	e.scan()
	e.write("catalog/a.jsonl", "") // emptied in place
	e.scan()
	want("emptied")
	e.write("catalog/a.jsonl", rows("a1", "a2"))
	e.scan()
	want("written again with a1, a2", "a3", "a4")

	e.write("catalog/a.jsonl", "garbage\n") // bad rows alone: held
	e.scan()
	want("bad rows", "a3", "a4")
	e.append("catalog/a.jsonl", rows("a1"))
	e.scan()
	want("a good row appended after the bad one", "a2", "a3", "a4")

	e.write("catalog/a.jsonl", "garbage\n") // held again, then a restart: holding is not stored
	e.scan()
	e.reopen()
	e.append("catalog/a.jsonl", rows("a3"))
	e.scan()
	want("a good row appended after the bad one, after a restart", "a1", "a2", "a4")
}
