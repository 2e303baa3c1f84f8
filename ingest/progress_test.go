package ingest

import (
	"fmt"
	"strings"
	"testing"
)

// TestProgressCountsBytesLinesAndFiles: a scan's progress reports grow commit by commit up to
// the backlog it found: every byte, line and file, bad lines included; a second scan of the
// same files has no backlog.
func TestProgressCountsBytesLinesAndFiles(t *testing.T) {
	var got []Progress
	e := newEnv(t, Options{MaxRecords: 7, Progress: func(p Progress) { got = append(got, p) }})
	var a, b strings.Builder
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&a, `{"env": "e", "task_id": "%d", "reward": 1}`+"\n", i)
	}
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&b, `{"env": "f", "task_id": "%d", "reward": 0}`+"\n", i)
	}
	b.WriteString("not json\n")
	e.write("rollouts/a.jsonl", a.String())
	e.write("rollouts/b.jsonl", b.String())
	e.scan()
	if len(got) < 2 {
		t.Fatalf("%d progress reports for 43 lines in commits of 7, want several", len(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i].Done < got[i-1].Done || got[i].Lines < got[i-1].Lines || got[i].FilesRead < got[i-1].FilesRead {
			t.Errorf("progress went back: %+v after %+v", got[i], got[i-1])
		}
	}
	last := got[len(got)-1]
	want := Progress{Done: int64(a.Len() + b.Len()), Total: int64(a.Len() + b.Len()), Lines: 43, FilesRead: 2, Files: 2}
	if last != want {
		t.Errorf("last report %+v, want %+v", last, want)
	}
	got = nil
	e.scan()
	for _, p := range got {
		if p.Total != 0 || p.Files != 0 {
			t.Errorf("a scan with nothing new reports a backlog: %+v", p)
		}
	}
}
