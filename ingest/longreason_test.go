package ingest

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
)

// TestLongNamesInWholeFileAreQuotedAndCut: a catalogue file read whole (parquet) whose rows
// name envs of 1.25 MiB each, bytes a terminal obeys (ESC [2J) and invalid UTF-8 among them, put
// each whole name into its quarantine reason: six such rows stored 6 MiB of reasons and wrote 15
// MB of log. Now the reason quotes the first 40 characters and gives the length.
func TestLongNamesInWholeFileAreQuotedAndCut(t *testing.T) {
	long := strings.Repeat("\x1b[2J\xff", 1<<18)
	read := func(string) ([]record.Task, error) {
		return []record.Task{{Env: "good", Task: "g"}, {Env: long, Task: "t1"}, {Env: "e", Task: long}}, nil
	}
	e := newEnv(t, Options{ReadCatalogFile: read})
	e.write("catalog/long.parquet", "PAR1 stands for a parquet file PAR1")
	e.scan()
	q := e.quarantine()
	if len(q) != 2 {
		t.Fatalf("%d quarantine entries; want 2", len(q))
	}
	for _, entry := range q {
		if len(entry.Reason) > storage.MaxReason || !utf8.ValidString(entry.Reason) ||
			strings.Contains(entry.Reason, "\x1b") || !strings.Contains(entry.Reason, "(1310720 bytes)") ||
			!strings.Contains(entry.Reason, ReasonNameTooLong) {
			t.Errorf("reason of %d bytes: %.200q", len(entry.Reason), entry.Reason)
		}
	}
	if n := e.taskCount(); n != 1 {
		t.Errorf("%d tasks; want the good one", n)
	}
}
