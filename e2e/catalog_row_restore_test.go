package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestTaskRowRestoredWhenItsOtherFileGrewInTheSameScan (review13): the sibling of
// TestTaskRowFollowsTheFilesThatListIt with another order of events. b.jsonl, whose row t1
// took, is deleted in the same scan in which a.jsonl, the file still listing t1, gets a row of
// another task appended. ingest's restore (ingest/run.go, restore) takes every catalogue file
// in r.dirty as "touched" and drops from the tasks to restore every task a touched file lists
// ("a task a touched file lists took its row from that file in this scan"), but a.jsonl was
// read only from its old offset: t1's row was not read again, and t1 keeps the text of the
// deleted file for good. Ingested between the two events, t1 gets a.jsonl's text: the answer
// depends on how the events fell into scans (a restart, a slow scan).
func TestTaskRowRestoredWhenItsOtherFileGrewInTheSameScan(t *testing.T) {
	c := newCatalogDir(t)
	write, ingest, text, cat := c.write, c.ingest, c.text, c.cat
	write("a.jsonl", `{"env":"e","task_id":"t1","text":"alpha"}`+"\n"+`{"env":"e","task_id":"t2","text":"two"}`+"\n")
	ingest()
	write("b.jsonl", `{"env":"e","task_id":"t1","text":"beta"}`+"\n")
	ingest()
	if got := text("t1"); got != "beta" {
		t.Fatalf("t1 %q with b.jsonl read last; want beta", got)
	}
	// one scan: b.jsonl deleted, a.jsonl grown by a row of another task
	must(t, os.Remove(filepath.Join(cat, "b.jsonl")))
	f, err := os.OpenFile(filepath.Join(cat, "a.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(`{"env":"e","task_id":"t3","text":"three"}` + "\n")
	must(t, err)
	must(t, f.Close())
	ingest()
	if got := text("t1"); got != "alpha" {
		t.Errorf("t1 %q once b.jsonl is deleted in the scan that read a.jsonl's new row; want alpha, the row of "+
			"a.jsonl, the only file listing it (as when the two events fall into two scans)", got)
	}
}

// TestTaskRowRestoredWhenTheScanCommitsInPieces (review13): restore (ingest/run.go) finds the
// catalogue files rewritten in this scan in r.dirty, which every intermediate flush empties
// (ingest/run.go, flush). b.jsonl, whose row t1 took, rewritten without t1 in a scan that then
// reads more than a commit holds (here a new catalogue file of 10,050 rows; as well a backlog of
// rollouts) is committed by an intermediate flush and is not in r.dirty at the end: t1 keeps the
// text no file gives, where the same rewrite in a small scan gives it a.jsonl's.
func TestTaskRowRestoredWhenTheScanCommitsInPieces(t *testing.T) {
	c := newCatalogDir(t)
	write, ingest, text := c.write, c.ingest, c.text
	write("a.jsonl", `{"env":"e","task_id":"t1","text":"alpha"}`+"\n"+`{"env":"e","task_id":"t2","text":"two"}`+"\n")
	ingest()
	write("b.jsonl", `{"env":"e","task_id":"t1","text":"beta"}`+"\n")
	ingest()
	if got := text("t1"); got != "beta" {
		t.Fatalf("t1 %q with b.jsonl read last; want beta", got)
	}
	// one scan: b.jsonl rewritten in place without t1, then a large new file read after it
	write("b.jsonl", `{"env":"e","task_id":"t9","text":"nine"}`+"\n")
	var big bytes.Buffer
	for i := range 10050 {
		fmt.Fprintf(&big, `{"env":"z","task_id":"z%d","text":"row %d"}`+"\n", i, i%97)
	}
	write("z.jsonl", big.String())
	ingest()
	if got := text("t1"); got != "alpha" {
		t.Errorf("t1 %q once b.jsonl is rewritten without it in a scan committed in pieces; want alpha, the row "+
			"of a.jsonl, the only file listing it (as in a scan of one commit)", got)
	}
}
