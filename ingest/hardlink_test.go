package ingest

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
)

// TestHardLinkedPairIsOneFileQuietly: two names of one file (a hard link) are one file, read once
// under the name it was tracked by: no scan, full or hinted with either name, takes it for a
// rename (each did, logging "file renamed" and committing the path back and forth at every scan).
// A real rename afterwards (the tracked name removed) is still one.
func TestHardLinkedPairIsOneFileQuietly(t *testing.T) {
	var log bytes.Buffer
	e := newEnv(t, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	e.write("rollouts/run.jsonl", `{"env":"e","task":"1","reward":1}`+"\n")
	e.scan()
	if err := os.MkdirAll(e.path("rollouts/a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(e.path("rollouts/run.jsonl"), e.path("rollouts/a/zz.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(e.path("rollouts/run.jsonl"), e.path("rollouts/0.jsonl")); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		e.append("rollouts/run.jsonl", `{"env":"e","task":"2","reward":0}`+"\n")
		e.scan()
		for _, name := range []string{"rollouts/0.jsonl", "rollouts/a/zz.jsonl", "rollouts/run.jsonl"} {
			if _, err := e.in.ScanPaths(context.Background(), []string{e.path(name)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := strings.Count(log.String(), "file renamed"); n != 0 {
		t.Errorf("%d renames logged for a file with three names; want none:\n%s", n, log.String())
	}
	if got := e.tasks(); len(got) != 4 {
		t.Errorf("stored %v; want the 4 lines once each", got)
	}
	if err := os.Remove(e.path("rollouts/run.jsonl")); err != nil {
		t.Fatal(err)
	}
	e.append("rollouts/0.jsonl", `{"env":"e","task":"3","reward":1}`+"\n")
	e.scan()
	e.scan()
	if got := e.tasks(); len(got) != 5 {
		t.Errorf("after the tracked name was removed: stored %v; want 5 lines once each", got)
	}
	if n := strings.Count(log.String(), "file renamed"); n != 1 {
		t.Errorf("%d renames logged after the tracked name was removed; want 1", n)
	}
}

// TestHardLinkAcrossCatalogAndRollouts: a rollout file hard-linked into catalog/ (or a catalogue
// file into rollouts/) is the file it was first tracked as. Taken for a rename across the two
// kinds, it was a new file at every scan, read from its start as the other kind: rollouts
// counted again and again, catalogue rows quarantined again and again as rollouts without reward.
// One exception (hostile16): a file tracked as a catalogue whose first line is a rollout becomes
// a rollout file once it is linked into rollouts/ (its rollouts were never counted otherwise);
// it does so once, its rollouts counted once.
func TestHardLinkAcrossCatalogAndRollouts(t *testing.T) {
	for _, tc := range []struct {
		first, link string
		more        int64 // rollouts counted after the link
	}{
		{"rollouts/r.jsonl", "catalog/r.jsonl", 0},
		{"catalog/c.jsonl", "rollouts/c.jsonl", 2},
	} {
		t.Run(tc.first, func(t *testing.T) {
			e := newEnv(t, Options{})
			e.write(tc.first, `{"env":"e","task":"1","reward":1}`+"\n"+`{"env":"e","task":"2","reward":0}`+"\n")
			e.scan()
			before := e.counters()
			if err := os.MkdirAll(e.path(strings.Split(tc.link, "/")[0]), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Link(e.path(tc.first), e.path(tc.link)); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				e.scan()
				if _, err := e.in.ScanPaths(context.Background(), []string{e.path(tc.link)}); err != nil {
					t.Fatal(err)
				}
			}
			e.reopen()
			e.scan()
			if after := e.counters(); after.Rollouts != before.Rollouts+tc.more || after.Quarantined != before.Quarantined {
				t.Errorf("after linking %s to %s: rollouts %d -> %d, quarantined %d -> %d; want +%d and unchanged",
					tc.first, tc.link, before.Rollouts, after.Rollouts, before.Quarantined, after.Quarantined, tc.more)
			}
		})
	}
}

// TestMovedAcrossCatalogAndRolloutsAndBack: a rollout file moved into catalog/ (read there as
// the catalogue file it now is) and moved back into rollouts/ resumes where it was, as a file
// moved anywhere else and back does; likewise a catalogue file moved into rollouts/ and back.
// Its tracked state of the first kind was lost when it was read as the other kind: moved back,
// it was a new file, read from its start, every rollout counted a second time (hostile14a:
// 15 rollouts for 11 with the real daemon), every catalogue row stored again.
func TestMovedAcrossCatalogAndRolloutsAndBack(t *testing.T) {
	for _, tc := range []struct{ home, away string }{
		{"rollouts/r.jsonl", "catalog/r.jsonl"},
		{"catalog/c.jsonl", "rollouts/c.jsonl"},
	} {
		t.Run(tc.home, func(t *testing.T) {
			e := newEnv(t, Options{})
			e.write(tc.home, `{"env":"e","task":"1","reward":1}`+"\n"+`{"env":"e","task":"2","reward":0}`+"\n")
			e.scan()
			if err := os.MkdirAll(e.path(strings.Split(tc.away, "/")[0]), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(e.path(tc.home), e.path(tc.away)); err != nil {
				t.Fatal(err)
			}
			e.scan()
			away := e.counters()
			if err := os.Rename(e.path(tc.away), e.path(tc.home)); err != nil {
				t.Fatal(err)
			}
			e.scan()
			e.reopen()
			e.scan()
			after := e.counters()
			if after.Rollouts != away.Rollouts || after.Quarantined != away.Quarantined {
				t.Errorf("moved %s to %s (rollouts %d, quarantined %d) and back: rollouts %d, quarantined %d; "+
					"want unchanged (it resumes where it was)", tc.home, tc.away, away.Rollouts, away.Quarantined,
					after.Rollouts, after.Quarantined)
			}
			e.append(tc.home, `{"env":"e","task":"3","reward":1}`+"\n")
			e.scan()
			if got := e.counters(); tc.home == "rollouts/r.jsonl" && got.Rollouts != after.Rollouts+1 {
				t.Errorf("a line appended after the move back: rollouts %d -> %d; want one more", after.Rollouts, got.Rollouts)
			}
		})
	}
}

// TestCatalogueLinkedIntoRolloutsLaterStaysQuietly (newuser16): a catalogue file of catalogue
// rows, read, then hard-linked into rollouts/ (as README says, "A catalogue first line keeps it
// the catalogue file it was, its rollouts/ name not read and nothing logged"): no rollout
// counted, nothing quarantined, no warning, every task still listed and none retired, also after
// a reopen and a change to the file through its rollouts/ name.
func TestCatalogueLinkedIntoRolloutsLaterStaysQuietly(t *testing.T) {
	var log bytes.Buffer
	e := newEnv(t, Options{Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	e.write("catalog/c.jsonl", `{"env":"e","task_id":"1","text":"one"}`+"\n"+`{"env":"e","task_id":"2","text":"two"}`+"\n")
	e.scan()
	if err := os.MkdirAll(e.path("rollouts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(e.path("catalog/c.jsonl"), e.path("rollouts/c.jsonl")); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		e.scan()
		if _, err := e.in.ScanPaths(context.Background(), []string{e.path("rollouts/c.jsonl")}); err != nil {
			t.Fatal(err)
		}
	}
	e.reopen()
	e.append("rollouts/c.jsonl", `{"env":"e","task_id":"3","text":"three"}`+"\n")
	e.scan()
	if c := e.counters(); c.Rollouts != 0 || c.Quarantined != 0 {
		t.Errorf("rollouts %d, quarantined %d; want 0 and 0", c.Rollouts, c.Quarantined)
	}
	if got := e.catalogued(); strings.Join(got, ",") != "e/1,e/2,e/3" {
		t.Errorf("catalogued %v; want e/1, e/2 and e/3", got)
	}
	if r := e.retired(); len(r) != 0 {
		t.Errorf("retired %v; want none", r)
	}
	if log.Len() != 0 {
		t.Errorf("logged at WARN or above; want nothing:\n%s", log.String())
	}
}
