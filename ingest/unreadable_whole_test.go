package ingest

import (
	"bytes"
	"os"
	"reflect"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/envsched/envsched/storage"
)

// parquetOf is a parquet catalogue of tasks in env e.
func parquetOf(t *testing.T, tasks ...string) string {
	type row struct {
		Env  string `parquet:"env"`
		Task string `parquet:"task_id"`
	}
	var b bytes.Buffer
	w := parquet.NewGenericWriter[row](&b)
	for _, task := range tasks {
		if _, err := w.Write([]row{{"e", task}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// replace writes rel as a new file renamed into place (a new identity, as writers do).
func (e *env) replace(rel, data string) {
	e.t.Helper()
	e.write(rel+".tmp", data)
	if err := os.Rename(e.path(rel+".tmp"), e.path(rel)); err != nil {
		e.t.Fatal(err)
	}
}

// TestUnreadableWholeFileRetiresNothing: a parquet catalogue replaced by one that cannot be read
// as parquet at all (broken, or beyond the reader's bounds; or a file an earlier build read and
// this one refuses) was taken for a file that lists no task: every task it had listed was retired
// (never chosen again), though PROTOCOL.md says such a file retires nothing. Now none of its tasks
// is retired while it stays so, across a restart and other catalogue changes; the tasks other
// files leave out are retired as usual (a broken file held back every retirement, of every
// dataset). Once it reads again its list counts. A stray file of another name (notes.txt) holds
// nothing back.
func TestUnreadableWholeFileRetiresNothing(t *testing.T) {
	e := newEnv(t, Options{ReadCatalogFile: readStray})
	key := func(task string) storage.TaskKey { return storage.TaskKey{Env: "e", Task: task} }
	e.replace("catalog/a.parquet", parquetOf(t, "a1", "a2", "a3"))
	e.write("catalog/b.jsonl", `{"env":"e","task":"b1"}`+"\n")
	e.scan()

	e.replace("catalog/a.parquet", "PAR1 not parquet at all PAR1")
	e.scan()
	if r := e.retired(); len(r) != 0 {
		t.Fatalf("replaced by a broken file: retired %v; want none", r)
	}
	e.append("catalog/b.jsonl", `{"env":"e","task":"b2"}`+"\n")
	e.scan()
	e.reopen()
	e.replace("catalog/b.jsonl", `{"env":"e","task":"b2"}`+"\n") // b1 removed: retired, a.parquet's held
	e.scan()
	if r, want := e.retired(), map[storage.TaskKey]bool{key("b1"): true}; !reflect.DeepEqual(r, want) {
		t.Fatalf("after other changes and a restart: retired %v; want %v (a.parquet's tasks held while it is broken)", r, want)
	}

	e.replace("catalog/a.parquet", parquetOf(t, "a1", "a2"))
	e.scan()
	if r, want := e.retired(), map[storage.TaskKey]bool{key("a3"): true, key("b1"): true}; !reflect.DeepEqual(r, want) {
		t.Fatalf("a.parquet readable again: retired %v; want %v", r, want)
	}
	e.write("catalog/notes.txt", "a stray file\n")
	e.replace("catalog/b.jsonl", `{"env":"e","task":"b3"}`+"\n")
	e.scan()
	if r := e.retired(); !r[key("b2")] || r[key("a1")] {
		t.Fatalf("with a stray notes.txt: retired %v; want b2 (and a1 not)", r)
	}
}
