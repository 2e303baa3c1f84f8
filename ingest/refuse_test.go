package ingest

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
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
