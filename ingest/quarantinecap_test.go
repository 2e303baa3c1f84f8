package ingest

import (
	"strings"
	"testing"
)

// TestQuarantineStoresAThousandLinesPerFile: a file of bad lines (a wrong dump pointed at
// rollouts/) stored every line's details: a million bad lines made a quarantine of 700 MB, twice
// the file. Now the first MaxStoredPerFile bad lines of each file are stored with their
// details and the rest are counted only, across scans and restarts; good lines among them are
// stored as ever, and the counter says how many lines were quarantined in all.
func TestQuarantineStoresAThousandLinesPerFile(t *testing.T) {
	bad := func(n int) string { return strings.Repeat("not json\n", n) }
	e := newEnv(t, Options{MaxRecords: 100})
	e.write("rollouts/dump.jsonl", bad(MaxStoredPerFile-10)+lines("a")+bad(500))
	e.write("rollouts/other.jsonl", bad(3)+lines("b"))
	e.scan()
	e.reopen()
	e.append("rollouts/dump.jsonl", bad(10)+lines("c"))
	e.scan()
	c := e.counters()
	if want := int64(MaxStoredPerFile - 10 + 500 + 3 + 10); c.Quarantined != want {
		t.Errorf("counter quarantined %d; want %d (every bad line)", c.Quarantined, want)
	}
	perFile := map[string]int{}
	for _, q := range e.quarantine() {
		perFile[q.Path]++
	}
	if perFile["rollouts/dump.jsonl"] != MaxStoredPerFile || perFile["rollouts/other.jsonl"] != 3 {
		t.Errorf("stored entries per file %v; want %d of dump.jsonl and 3 of other.jsonl", perFile, MaxStoredPerFile)
	}
	if got := strings.Join(e.tasks(), ","); got != "e/a=1,e/b=1,e/c=1" {
		t.Errorf("stored %s; want the good lines a, b, c", got)
	}
}
