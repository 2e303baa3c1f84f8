package ingest

import (
	"os"
	"strings"
	"testing"
	"time"
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

// TestUnchangedFilesAreNotOpened: a full scan over files read to their end, and settled since,
// opens none of them (the barrier over 50,000 files cost 0.7-0.8 s, mostly opens); a file
// changed in any way is opened and read. (A file changed less than settleAfter ago is opened
// and checked by content: its times may hide a rewrite within the same clock tick.)
func TestUnchangedFilesAreNotOpened(t *testing.T) {
	e := newEnv(t, Options{settleAfter: 20 * time.Millisecond})
	e.write("rollouts/a.jsonl", lines("a"))
	e.write("rollouts/b.jsonl", lines("b"))
	e.scan()
	time.Sleep(40 * time.Millisecond) // let the files settle
	e.scan()                          // checks them by content and records their stamps
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

// TestYoungFilesAreCheckedByContent: a file whose times are younger than settleAfter is opened
// and checked by content at every full scan, even when its size and times look unchanged. File
// times are coarse (a clock tick of a few milliseconds on many kernels): a truncate and rewrite
// to the same size within the tick of the previous write leaves size, modification time and
// change time as they were, and a stat-only check would lose the new lines for good. That race
// cannot be produced on demand, so this test checks the rule that closes it.
func TestYoungFilesAreCheckedByContent(t *testing.T) {
	e := newEnv(t, Options{settleAfter: time.Hour})
	e.write("rollouts/a.jsonl", lines("a"))
	e.scan()
	e.scan()
	var read []string
	e.in.opts.onOpen = func(rel string) { read = append(read, rel) }
	e.scan()
	if strings.Join(read, ",") != "rollouts/a.jsonl" {
		t.Fatalf("a scan of a file younger than settleAfter opened %v; want it checked by content", read)
	}
}

// TestFilesAheadOfTheClockSettle: a file whose modification time is ahead of the clock (the
// clock set back while envsched runs, a file copied with its times from a machine ahead, touch
// -d) settles once two checks by content, settleAfter apart by the process's own clock, found the
// same stamp. It never settled until the clock caught up with its time: every full scan, so
// every request's barrier, opened it again (5,000 rollout files a day ahead: barriers of 210-550
// ms against 35-185 ms). A file changed between the checks still does not settle.
func TestFilesAheadOfTheClockSettle(t *testing.T) {
	e := newEnv(t, Options{settleAfter: 20 * time.Millisecond})
	e.write("rollouts/a.jsonl", lines("a"))
	e.write("rollouts/b.jsonl", lines("b"))
	ahead := time.Now().Add(24 * time.Hour)
	for _, name := range []string{"rollouts/a.jsonl", "rollouts/b.jsonl"} {
		if err := os.Chtimes(e.path(name), ahead, ahead); err != nil {
			t.Fatal(err)
		}
	}
	e.scan()
	time.Sleep(40 * time.Millisecond)
	e.append("rollouts/b.jsonl", lines("c")) // changed between the checks: its time is now's
	if err := os.Chtimes(e.path("rollouts/b.jsonl"), ahead, ahead); err != nil {
		t.Fatal(err)
	}
	e.scan() // a: the same stamp 40 ms later, settled; b: checked with a new stamp
	var read []string
	e.in.opts.onOpen = func(rel string) { read = append(read, rel) }
	e.scan()
	if strings.Join(read, ",") != "rollouts/b.jsonl" {
		t.Fatalf("a scan after two checks opened %v; want b only (changed between them)", read)
	}
	// b settles at the first check 20 ms after the one that saw its new stamp: the scan just
	// made when it came 20 ms or more later (a slow or loaded machine), else the next one
	time.Sleep(40 * time.Millisecond)
	read = nil
	e.scan() // b: the same stamp since the last scan
	if len(read) > 1 || len(read) == 1 && read[0] != "rollouts/b.jsonl" {
		t.Fatalf("opened %v; want at most b once more", read)
	}
	read = nil
	e.scan()
	if len(read) != 0 {
		t.Fatalf("opened %v after b settled; want nothing", read)
	}
	if got := strings.Join(e.tasks(), ","); got != "e/a=1,e/b=1,e/c=1" {
		t.Fatalf("stored %s", got)
	}
}
