package ingest

import (
	"strings"
	"testing"
)

// TestFullScanReadsUpToTheListedSize: the barrier is what was written before it; lines written
// while it runs (a torrent) wait for the next pass, so a request never waits for a backlog
// written after it. Before, a full scan read every file to its end at the moment it got there.
func TestFullScanReadsUpToTheListedSize(t *testing.T) {
	var e *env
	late := true
	e = newEnv(t, Options{afterList: func(cands []candidate) []candidate {
		if late {
			e.append("rollouts/a.jsonl", lines("late")) // written after the listing
			late = false
		}
		return cands
	}})
	e.write("rollouts/a.jsonl", lines("early"))
	e.scan()
	if got := strings.Join(e.tasks(), ","); got != "e/early=1" {
		t.Fatalf("first scan stored %s; want only the line listed before it started", got)
	}
	e.scan()
	if got := strings.Join(e.tasks(), ","); got != "e/early=1,e/late=1" {
		t.Fatalf("second scan stored %s; want the late line too, once", got)
	}
}

// TestUnchangedFilesAreNotOpened: a full scan over files read to their end opens none of them
// (the barrier over 50,000 files cost 0.7-0.8 s, mostly opens); a file changed in any way is
// opened and read.
func TestUnchangedFilesAreNotOpened(t *testing.T) {
	e := newEnv(t, Options{})
	e.write("rollouts/a.jsonl", lines("a"))
	e.write("rollouts/b.jsonl", lines("b"))
	e.scan()
	e.scan() // records the change times of the files opened by this process
	var read []string
	e.in.opts.onOpen = func(rel string) { read = append(read, rel) }
	e.scan()
	if len(read) != 0 {
		t.Fatalf("an unchanged scan opened %v", read)
	}
	e.append("rollouts/b.jsonl", lines("c"))
	e.scan()
	if strings.Join(read, ",") != "rollouts/b.jsonl" {
		t.Fatalf("after an append, opened %v; want b only", read)
	}
	if got := strings.Join(e.tasks(), ","); got != "e/a=1,e/b=1,e/c=1" {
		t.Fatalf("stored %s", got)
	}
}
