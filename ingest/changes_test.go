package ingest

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// padded returns rollout lines for tasks t<from> .. t<to-1> whose first 64 bytes are all the
// same (a trainer's lines often start alike for longer than the head fingerprint).
func padded(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, `{"pad":"%s","env":"e","reward":1,"task":"t%d"}`+"\n", strings.Repeat("x", 64), i)
	}
	return b.String()
}

// stored returns what tasks() gives for the tasks t<from> .. t<to-1>, each once per range.
func stored(ranges ...[2]int) []string {
	var out []string
	for _, r := range ranges {
		for i := r[0]; i < r[1]; i++ {
			out = append(out, fmt.Sprintf("e/t%d=1", i))
		}
	}
	sort.Strings(out)
	return out
}

func inode(e *env, rel string) uint64 {
	e.t.Helper()
	fi, err := os.Stat(e.path(rel))
	if err != nil {
		e.t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// recreateReusing deletes rel and writes data under the same name, and reports whether the
// filesystem gave the new file the freed inode (ext4 does, at once; tmpfs never does).
func recreateReusing(e *env, rel, data string) bool {
	e.t.Helper()
	old := inode(e, rel)
	mustRemove(e, rel)
	e.write(rel, data)
	return inode(e, rel) == old
}

// TestFileChanges drives every kind of change a trainer can make to a rollout file, with scans
// (as the daemon's) between them, and says what must be stored: every line once.
func TestFileChanges(t *testing.T) {
	const out = "elsewhere/run.jsonl" // inside DIR, outside rollouts/
	cases := []struct {
		name  string
		opt   Options
		reuse bool // needs a filesystem that reuses a freed inode at once
		run   func(e *env)
		want  []string
	}{
		{"truncated and rewritten longer, first 64 bytes unchanged", Options{}, false, func(e *env) {
			e.write(f, padded(0, 100))
			e.scan()
			e.write(f, padded(100, 300)) // os.WriteFile truncates: same inode
			e.scan()
		}, stored([2]int{0, 300})},
		{"truncated and rewritten to the same size, times put back", Options{settleAfter: time.Millisecond}, false, func(e *env) {
			e.write(f, padded(10, 20))
			fi, _ := os.Stat(e.path(f))
			time.Sleep(5 * time.Millisecond) // let the file settle: the next scan trusts its stat
			e.scan()
			e.scan()
			e.write(f, padded(20, 30)) // same length: t1x -> t2x
			if err := os.Chtimes(e.path(f), fi.ModTime(), fi.ModTime()); err != nil {
				e.t.Fatal(err)
			}
			e.scan()
		}, stored([2]int{10, 30})},
		{"last lines read overwritten in place, then appended", Options{}, false, func(e *env) {
			e.write(f, padded(0, 10))
			e.scan()
			wf, err := os.OpenFile(e.path(f), os.O_WRONLY, 0)
			if err != nil {
				e.t.Fatal(err)
			}
			body := padded(0, 9) + padded(90, 91) + padded(91, 95) // line 9 becomes 90; same length
			if _, err := wf.WriteAt([]byte(body), 0); err != nil {
				e.t.Fatal(err)
			}
			wf.Close()
			e.scan()
		}, stored([2]int{0, 10}, [2]int{0, 9}, [2]int{90, 95})},
		{"deleted and made again, inode reused, same first bytes", Options{}, true, func(e *env) {
			e.write(f, padded(0, 100))
			e.scan()
			if !recreateReusing(e, f, padded(100, 300)) {
				e.t.Skip("the filesystem did not reuse the inode")
			}
			e.scan()
		}, stored([2]int{0, 300})},
		{"deleted and made again, inode reused, no birth times", Options{noBirth: true}, true, func(e *env) {
			e.write(f, padded(0, 100))
			e.scan()
			if !recreateReusing(e, f, padded(100, 300)) {
				e.t.Skip("the filesystem did not reuse the inode")
			}
			e.scan()
		}, stored([2]int{0, 300})},
		{"deleted, seen gone, made again with the freed inode and the same lines first", Options{}, true, func(e *env) {
			e.write(f, padded(0, 10))
			e.scan()
			old := inode(e, f)
			mustRemove(e, f)
			e.scan()
			e.write(f, padded(0, 12))
			if inode(e, f) != old {
				e.t.Skip("the filesystem did not reuse the inode")
			}
			e.scan()
		}, stored([2]int{0, 10}, [2]int{0, 12})},
		{"moved out of rollouts/ and back", Options{}, false, func(e *env) {
			e.write(f, padded(0, 100))
			e.scan()
			mustRename(e, f, out)
			e.scan()
			mustRename(e, out, f)
			e.scan()
		}, stored([2]int{0, 100})},
		{"moved out, appended to, moved back under another name", Options{}, false, func(e *env) {
			e.write(f, padded(0, 100))
			e.scan()
			mustRename(e, f, out)
			e.scan()
			e.append(out, padded(100, 150))
			mustRename(e, out, "rollouts/sub/back.jsonl")
			e.scan()
		}, stored([2]int{0, 150})},
		{"renamed to a dot-name and back", Options{}, false, func(e *env) {
			e.write(f, padded(0, 100))
			e.scan()
			mustRename(e, f, "rollouts/.run.jsonl")
			e.scan()
			mustRename(e, "rollouts/.run.jsonl", f)
			e.scan()
		}, stored([2]int{0, 100})},
		{"renamed to a .tmp name, restart, and back", Options{}, false, func(e *env) {
			e.write(f, padded(0, 100))
			e.scan()
			mustRename(e, f, "rollouts/run.jsonl.tmp")
			e.scan()
			e.reopen()
			e.append("rollouts/run.jsonl.tmp", padded(100, 101))
			mustRename(e, "rollouts/run.jsonl.tmp", f)
			e.scan()
		}, stored([2]int{0, 101})},
		{"moved into a dot-folder, rewritten there, moved back", Options{}, false, func(e *env) {
			e.write(f, padded(0, 100))
			e.scan()
			mustRename(e, f, "rollouts/.old/run.jsonl")
			e.scan()
			e.write("rollouts/.old/run.jsonl", padded(200, 250))
			mustRename(e, "rollouts/.old/run.jsonl", f)
			e.scan()
		}, stored([2]int{0, 100}, [2]int{200, 250})},
		{"rotated: renamed aside, new file under the name, both appended", Options{}, false, func(e *env) {
			e.write(f, padded(0, 10))
			e.scan()
			mustRename(e, f, "rollouts/run.1.jsonl")
			e.write(f, padded(10, 20))
			e.append("rollouts/run.1.jsonl", padded(20, 25))
			e.scan()
			e.append(f, padded(25, 30))
			e.scan()
		}, stored([2]int{0, 30})},
		{"a second hard link to a file", Options{}, false, func(e *env) {
			e.write(f, padded(0, 10))
			e.scan()
			if err := os.Link(e.path(f), e.path("rollouts/link.jsonl")); err != nil {
				e.t.Fatal(err)
			}
			e.append(f, padded(10, 12))
			e.scan()
			e.scan()
		}, stored([2]int{0, 12})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.opt)
			tc.run(e)
			if got := e.tasks(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("stored %d rollouts, want %d:\n got %v\nwant %v", len(got), len(tc.want), got, tc.want)
			}
			e.reopen()
			if s := e.scan(); s.Rollouts != 0 || s.Quarantined != 0 {
				t.Errorf("a scan after reopening stored %+v; want nothing new", s)
			}
		})
	}
}

// catalogueRows returns catalogue lines for tasks c<from> .. c<to-1>, the first 64 bytes alike.
func catalogueRows(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, `{"pad":"%s","env":"e","task_id":"c%d","text":"task %d"}`+"\n", strings.Repeat("x", 64), i, i)
	}
	return b.String()
}

// TestCatalogueChanges: the catalogue folder follows the same rules. A catalogue rewritten at
// once with its first bytes unchanged adds its new tasks (they were lost), and a catalogue moved
// out and back is not read again.
func TestCatalogueChanges(t *testing.T) {
	const c = "catalog/tasks.jsonl"
	e := newEnv(t, Options{})
	e.write(c, catalogueRows(0, 10))
	if s := e.scan(); s.TaskRows != 10 {
		t.Fatalf("first scan read %d rows; want 10", s.TaskRows)
	}
	e.write(c, catalogueRows(100, 130)) // other tasks, same first bytes, longer
	if s := e.scan(); s.TaskRows != 30 || s.NewTasks != 30 {
		t.Errorf("rewritten catalogue: %d rows, %d new tasks; want 30 and 30", s.TaskRows, s.NewTasks)
	}
	mustRename(e, c, "aside/tasks.jsonl")
	e.scan()
	mustRename(e, "aside/tasks.jsonl", c)
	if s := e.scan(); s.TaskRows != 0 || s.Resumed != 1 {
		t.Errorf("catalogue moved out and back: %d rows read, %d files resumed; want 0 and 1", s.TaskRows, s.Resumed)
	}
	if envs, _ := e.db.Envs(); envs["e"].Tasks != 40 {
		t.Errorf("%d tasks in the catalogue; want 40", envs["e"].Tasks)
	}
}
