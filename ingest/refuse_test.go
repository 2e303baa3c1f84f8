package ingest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/envsched/envsched/storage"
)

// TestRefusedFiles puts things that are not regular files where rollout and catalogue files
// go. None may be opened for reading (a FIFO would block the scan for good), none may be read
// through a link (PROTOCOL.md: no link is followed), each is quarantined once per path while
// the ingester lives, and the regular files around them are read. Both the full scan (the poll
// and safety scans) and the scan of hinted paths (the notify mode) are run.
func TestRefusedFiles(t *testing.T) {
	cases := []struct {
		name    string
		make    func(e *env, outside string)
		hint    []string // paths ScanPaths is given, in the hinted variant
		refused []string // "path@0:reason" quarantine entries
		want    []string // stored rollouts
	}{
		{"FIFO named like a rollout file", func(e *env, _ string) {
			mkfifo(e, "rollouts/pipe.jsonl")
		}, []string{"rollouts/pipe.jsonl"}, []string{"rollouts/pipe.jsonl@0:not a regular file: named pipe (FIFO)"}, nil},
		{"FIFO named like a catalogue file", func(e *env, _ string) {
			mkfifo(e, "catalog/tasks.jsonl")
		}, []string{"catalog/tasks.jsonl"}, []string{"catalog/tasks.jsonl@0:not a regular file: named pipe (FIFO)"}, nil},
		{"FIFO named like a parquet catalogue", func(e *env, _ string) {
			mkfifo(e, "catalog/tasks.parquet")
		}, []string{"catalog/tasks.parquet"}, []string{"catalog/tasks.parquet@0:not a regular file: named pipe (FIFO)"}, nil},
		{"link to a file outside DIR", func(e *env, outside string) {
			symlink(e, filepath.Join(outside, "secret.jsonl"), "rollouts/s.jsonl")
		}, []string{"rollouts/s.jsonl"}, []string{"rollouts/s.jsonl@0:not a regular file: symbolic link"}, nil},
		{"catalogue link to a file outside DIR", func(e *env, outside string) {
			symlink(e, filepath.Join(outside, "secret.jsonl"), "catalog/s.jsonl")
		}, []string{"catalog/s.jsonl"}, []string{"catalog/s.jsonl@0:not a regular file: symbolic link"}, nil},
		{"link to a rollout file inside DIR: the target is read under its own name", func(e *env, _ string) {
			e.write("rollouts/real.jsonl", line("in"))
			symlink(e, e.path("rollouts/real.jsonl"), "rollouts/alias.jsonl")
		}, []string{"rollouts/alias.jsonl", "rollouts/real.jsonl"},
			[]string{"rollouts/alias.jsonl@0:not a regular file: symbolic link"}, stored1("in")},
		{"linked folder leading out of DIR", func(e *env, outside string) {
			symlink(e, outside, "rollouts/sub")
		}, []string{"rollouts/sub", "rollouts/sub/secret.jsonl"}, nil, nil},
		{"folder named like a rollout file", func(e *env, _ string) {
			e.write("rollouts/d.jsonl/in.jsonl", line("nested"))
		}, []string{"rollouts/d.jsonl"}, nil, stored1("nested")},
	}
	for _, tc := range cases {
		for _, hinted := range []bool{false, true} {
			name := tc.name + "/full scan"
			if hinted {
				name = tc.name + "/hinted paths"
			}
			t.Run(name, func(t *testing.T) {
				e := newEnv(t, Options{})
				outside := t.TempDir()
				if err := os.WriteFile(filepath.Join(outside, "secret.jsonl"), []byte(line("secret")), 0o644); err != nil {
					t.Fatal(err)
				}
				e.write("rollouts/ok.jsonl", line("ok"))
				e.scan()
				tc.make(e, outside)
				for range 2 { // refused once, not again
					if hinted {
						scanPathsWithin(e, tc.hint)
					} else {
						scanWithin(e)
					}
				}
				if got, want := e.tasks(), append(stored1("ok"), tc.want...); !equalSorted(got, want) {
					t.Errorf("stored %v, want %v", got, want)
				}
				if got := e.reasons(); !reflect.DeepEqual(got, tc.refused) {
					t.Errorf("quarantined %v, want %v", got, tc.refused)
				}
			})
		}
	}
}

func mkfifo(e *env, rel string) {
	e.t.Helper()
	if err := os.MkdirAll(filepath.Dir(e.path(rel)), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := syscall.Mkfifo(e.path(rel), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func symlink(e *env, target, rel string) {
	e.t.Helper()
	if err := os.MkdirAll(filepath.Dir(e.path(rel)), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.Symlink(target, e.path(rel)); err != nil {
		e.t.Fatal(err)
	}
}

// scanWithin runs a full scan and fails when it does not return within 10 s (a blocking open of
// a FIFO never returns: the scan is then left behind and the test binary killed at its end).
func scanWithin(e *env) {
	e.t.Helper()
	within(e, func() (Summary, error) { return e.in.Scan(context.Background()) })
}

func scanPathsWithin(e *env, rels []string) {
	e.t.Helper()
	var abs []string
	for _, r := range rels {
		abs = append(abs, e.path(r))
	}
	within(e, func() (Summary, error) { return e.in.ScanPaths(context.Background(), abs) })
}

func within(e *env, scan func() (Summary, error)) {
	e.t.Helper()
	done := make(chan error, 1)
	go func() { _, err := scan(); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			e.t.Fatalf("scan: %v", err)
		}
	case <-time.After(10 * time.Second):
		e.t.Fatalf("the scan blocked")
	}
}

func equalSorted(a, b []string) bool {
	return strings.Join(sortedCopy(a), "\n") == strings.Join(sortedCopy(b), "\n")
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

// TestRefusalOfAFailedCommitIsQuarantinedLater: a refused or unreadable file is marked as
// quarantined when its entry is queued; when the commit that carries the entry fails (a full
// disk), the scan returns the error and the next scan of the same process must queue the entry
// again. It did not: the file was never counted until a restart.
func TestRefusalOfAFailedCommitIsQuarantinedLater(t *testing.T) {
	cases := []struct {
		name, rel, reason string
		make              func(e *env, rel string)
	}{
		{"FIFO rollout file", "rollouts/pipe.jsonl", ReasonNotRegular, func(e *env, rel string) { mkfifo(e, rel) }},
		{"FIFO catalogue file", "catalog/pipe.jsonl", ReasonNotRegular, func(e *env, rel string) { mkfifo(e, rel) }},
		{"link in a subfolder", "rollouts/a/b/l.jsonl", ReasonNotRegular, func(e *env, rel string) { symlink(e, "/etc/passwd", rel) }},
		{"stray catalogue file (read whole)", "catalog/notes.txt", "not a catalogue file", func(e *env, rel string) {
			e.write(rel, "remember to buy milk\n")
		}},
		{"unreadable rollout file", "rollouts/locked.jsonl", ReasonUnreadable, func(e *env, rel string) {
			e.write(rel, lines("b"))
			if err := os.Chmod(e.path(rel), 0); err != nil {
				e.t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		for _, hinted := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/hinted=%v", tc.name, hinted), func(t *testing.T) {
				fail := true
				e := newEnv(t, Options{ReadCatalogFile: readStray, commitHook: func(*storage.Batch) error {
					if fail {
						return errors.New("disk full (simulated)")
					}
					return nil
				}})
				e.write("rollouts/ok.jsonl", lines("a"))
				tc.make(e, tc.rel)
				scan := func() error {
					var err error
					asUnprivileged(t, e.dir, func() {
						if hinted {
							_, err = e.in.ScanPaths(context.Background(), []string{e.path("rollouts/ok.jsonl"), e.path(tc.rel)})
						} else {
							_, err = e.in.Scan(context.Background())
						}
					})
					return err
				}
				if err := scan(); err == nil {
					t.Fatal("scan succeeded through a failing commit")
				}
				fail = false
				for range 2 { // quarantined once, not again
					if err := scan(); err != nil {
						t.Fatal(err)
					}
				}
				q := e.reasons()
				if len(q) != 1 || !strings.HasPrefix(q[0], tc.rel+"@0:"+tc.reason) {
					t.Errorf("quarantine = %q; want one entry for %s: %s", q, tc.rel, tc.reason)
				}
				if got := e.tasks(); strings.Join(got, ",") != "e/a=1" {
					t.Errorf("stored %v; want e/a once", got)
				}
			})
		}
	}
}

// TestDatabaseLinkedIntoTheFoldersIsRefused: a hard link to the database file made in rollouts/
// or catalog/ is refused and quarantined once, never read: read as input, the database's
// pages were quarantined into it, which changed it, so it was read again at the next scan, for
// ever (the quarantined count grew at every rescan, the whole database read each time). The
// rollouts around it count as usual.
func TestDatabaseLinkedIntoTheFoldersIsRefused(t *testing.T) {
	for _, link := range []string{"rollouts/db.jsonl", "catalog/db.jsonl", "rollouts/deep/er/db.jsonl"} {
		t.Run(link, func(t *testing.T) {
			e := newEnv(t, Options{})
			e.write("rollouts/r.jsonl", `{"env":"e","task":"a","reward":1}`+"\n")
			e.scan()
			if err := os.MkdirAll(filepath.Dir(e.path(link)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Link(e.db.Path(), e.path(link)); err != nil {
				t.Skipf("no hard link: %v", err)
			}
			for i := range 4 {
				e.append("rollouts/r.jsonl", fmt.Sprintf(`{"env":"e","task":"b%d","reward":0}`+"\n", i))
				e.scan()
			}
			e.reopen()
			e.scan()
			want := []string{link + "@0:" + ReasonDatabase}
			if got := e.reasons(); !reflect.DeepEqual(got, want) {
				t.Errorf("quarantine %q; want %q", got, want)
			}
			if c := e.counters(); c.Quarantined != 1 || c.Rollouts != 5 {
				t.Errorf("quarantined %d, rollouts %d; want 1 and 5", c.Quarantined, c.Rollouts)
			}
		})
	}
}

// TestDatabaseCopyIsQuarantinedWhole: a copy of the database (or of any bbolt file) put into
// rollouts/ or catalog/ under a .jsonl name is quarantined whole, once, and none of it is read
// as lines: the lines its pages hold (the stored fingerprint of a rollout file is its last
// bytes, often a whole rollout line) counted as rollouts a second time, and in catalog/ listed
// tasks. Appending to a real file after it goes on as usual.
func TestDatabaseCopyIsQuarantinedWhole(t *testing.T) {
	for _, copyTo := range []string{"rollouts/copy.jsonl", "catalog/copy.jsonl"} {
		t.Run(copyTo, func(t *testing.T) {
			e := newEnv(t, Options{})
			e.write("rollouts/r.jsonl", `{"env":"e","task":"a","reward":1}`+"\n")
			e.scan()
			e.append("rollouts/r.jsonl", `{"env":"e","task":"b","reward":0}`+"\n")
			e.scan()
			data, err := os.ReadFile(e.db.Path())
			if err != nil {
				t.Fatal(err)
			}
			e.write(copyTo, string(data))
			e.scan()
			e.append("rollouts/r.jsonl", `{"env":"e","task":"c","reward":0}`+"\n")
			e.scan()
			e.reopen()
			e.scan()
			want := []string{copyTo + "@0:" + ReasonBolt}
			if got := e.reasons(); !reflect.DeepEqual(got, want) {
				t.Errorf("quarantine %q; want %q", got, want)
			}
			if got := e.tasks(); !reflect.DeepEqual(got, []string{"e/a=1", "e/b=0", "e/c=0"}) {
				t.Errorf("rollouts %v; want a, b and c once", got)
			}
		})
	}
}
