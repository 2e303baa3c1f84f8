package ingest

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/envsched/envsched/catalog"
	"github.com/envsched/envsched/storage"
)

// readStray is the daemon's reader of catalogue files that are not JSON lines.
var readStray = catalog.ReadFile

// taskCount is the number of tasks stored.
func (e *env) taskCount() int {
	e.t.Helper()
	n := 0
	err := e.db.View(func(r *storage.Reader) error {
		return r.Tasks(false, func(storage.TaskInfo) error { n++; return nil })
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// nobody is the user the permission tests drop to when they run as root (root reads anything,
// so a file made unreadable would be read anyway and the test would prove nothing).
const nobody = 65534

// asUnprivileged runs fn with permissions that bite: as the current user when it is not root;
// as root, with the effective user set to nobody for the length of fn (the test's folders are
// made traversable first). It fails the test when it cannot drop the privileges.
func asUnprivileged(t *testing.T, dir string, fn func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		fn()
		return
	}
	for p := dir; p != "/" && p != "."; p = filepath.Dir(p) {
		if strings.HasPrefix(p, os.TempDir()) && p != os.TempDir() {
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := syscall.Seteuid(nobody); err != nil {
		t.Fatalf("running as root and cannot drop to uid %d, so permissions cannot be tested: %v", nobody, err)
	}
	defer func() {
		if err := syscall.Seteuid(0); err != nil {
			panic(err) // the rest of the run would be unprivileged
		}
	}()
	fn()
}

// TestUnreadableFileIsQuarantinedAndReadLater: a rollout or catalogue file envsched may not read
// is quarantined once with the reason, the scan goes on with the other files, and once it can be
// read its lines are stored exactly once.
func TestUnreadableFileIsQuarantinedAndReadLater(t *testing.T) {
	for _, rel := range []string{"rollouts/locked.jsonl", "catalog/locked.jsonl"} {
		t.Run(rel, func(t *testing.T) {
			e := newEnv(t, Options{})
			e.write("rollouts/ok.jsonl", lines("a"))
			e.write(rel, lines("b"))
			if err := os.Chmod(e.path(rel), 0); err != nil {
				t.Fatal(err)
			}
			asUnprivileged(t, e.dir, func() { e.scan() })
			e.append("rollouts/ok.jsonl", lines("c"))
			asUnprivileged(t, e.dir, func() { e.scan() }) // does not quarantine the same file again
			q := e.reasons()
			if len(q) != 1 || !strings.Contains(q[0], rel+"@0:"+ReasonUnreadable) ||
				!strings.Contains(q[0], "permission denied") {
				t.Fatalf("quarantine = %q; want one entry for %s saying permission denied", q, rel)
			}
			if got := e.tasks(); strings.Join(got, ",") != "e/a=1,e/c=1" {
				t.Fatalf("stored %v while %s was locked; want the other file's a and c", got, rel)
			}
			if err := os.Chmod(e.path(rel), 0o644); err != nil {
				t.Fatal(err)
			}
			e.scan()
			want := "e/a=1,e/b=1,e/c=1"
			if rel == "catalog/locked.jsonl" {
				want = "e/a=1,e/c=1" // a catalogue row is a task, not a rollout
				if n := e.taskCount(); n != 3 {
					t.Errorf("%d tasks once readable; want 3 (a, b of the catalogue, c)", n)
				}
			}
			if got := e.tasks(); strings.Join(got, ",") != want {
				t.Fatalf("stored %v once readable; want %s", got, want)
			}
		})
	}
}

// TestUnreadableFolderIsSkippedAndNothingIsForgotten: a folder under rollouts/ that cannot be
// listed is skipped (the scan goes on); the files tracked in it are not marked gone, so when it
// is readable again nothing is read twice.
func TestUnreadableFolderIsSkippedAndNothingIsForgotten(t *testing.T) {
	e := newEnv(t, Options{})
	e.write("rollouts/sub/r.jsonl", lines("a"))
	e.write("rollouts/ok.jsonl", lines("b"))
	e.scan()
	if err := os.Chmod(e.path("rollouts/sub"), 0); err != nil {
		t.Fatal(err)
	}
	e.append("rollouts/ok.jsonl", lines("c"))
	asUnprivileged(t, e.dir, func() { e.scan() })
	if err := os.Chmod(e.path("rollouts/sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.append("rollouts/sub/r.jsonl", lines("d"))
	e.scan()
	if got := strings.Join(e.tasks(), ","); got != "e/a=1,e/b=1,e/c=1,e/d=1" {
		t.Fatalf("stored %s; want a, b, c, d once each", got)
	}
}

// TestPathLongerThanPathMax: 2,500 nested folders under rollouts/ make paths longer than
// PATH_MAX; the scan skips what it cannot reach and stores the rest.
func TestPathLongerThanPathMax(t *testing.T) {
	e := newEnv(t, Options{})
	e.write("rollouts/ok.jsonl", lines("a"))
	deepen(t, e.path("rollouts"), 2500, "r.jsonl", lines("deep")) // 2 bytes a level: past 4096 at 2048
	e.write("rollouts/shallow/r.jsonl", lines("b"))
	e.scan()
	got := strings.Join(e.tasks(), ",")
	if !strings.Contains(got, "e/a=1") || !strings.Contains(got, "e/b=1") {
		t.Fatalf("stored %s; want a and b", got)
	}
}

// deepen makes depth nested folders "d" under root (with relative mkdirs, as a path that long
// cannot be named whole) and writes name in some of them.
func deepen(t testing.TB, root string, depth int, name, data string) {
	t.Helper()
	wd, err := os.Open(".")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := wd.Chdir(); err != nil {
			panic(err)
		}
		wd.Close()
	}()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Chdir(root))
	for i := range depth {
		must(os.Mkdir("d", 0o755))
		must(os.Chdir("d"))
		if i%1000 == 999 {
			must(os.WriteFile(name, []byte(data), 0o644))
		}
	}
}

// TestStrayCatalogFileIsQuarantined: a file in catalog/ that is neither .jsonl nor .parquet is
// quarantined with the reason; the rest of the catalogue is read.
func TestStrayCatalogFileIsQuarantined(t *testing.T) {
	e := newEnv(t, Options{ReadCatalogFile: readStray})
	e.write("catalog/notes.txt", "remember to buy milk\n")
	e.write("catalog/tasks.jsonl", `{"env":"e","task":"t"}`+"\n")
	e.scan()
	q := e.reasons()
	if len(q) != 1 || !strings.HasPrefix(q[0], "catalog/notes.txt@0:") {
		t.Fatalf("quarantine = %q; want notes.txt", q)
	}
	if n := e.taskCount(); n != 1 {
		t.Fatalf("tasks = %d; want 1", n)
	}
}

// TestEditorFilesInCatalogAreIgnored: an editor's backup and autosave files beside a catalogue
// (Emacs' tasks.jsonl~ and #tasks.jsonl#) are neither read nor quarantined: they were counted as
// stray catalogue files. A stray file of any other name still is; rollouts/ keeps its rule.
func TestEditorFilesInCatalogAreIgnored(t *testing.T) {
	e := newEnv(t, Options{ReadCatalogFile: readStray})
	e.write("catalog/tasks.jsonl", `{"env":"e","task":"t"}`+"\n")
	e.write("catalog/tasks.jsonl~", `{"env":"e","task":"old"}`+"\n")
	e.write("catalog/#tasks.jsonl#", `{"env":"e","task":"autosave"}`+"\n")
	e.write("catalog/notes.txt", "remember\n")
	e.write("catalog/#notes", "not an autosave: no closing #\n")
	e.write("rollouts/run~/a.jsonl", line("in"))
	e.scan()
	want := []string{"catalog/#notes@0:", "catalog/notes.txt@0:"}
	q := e.reasons()
	if len(q) != len(want) {
		t.Fatalf("quarantine = %q; want the two stray files only", q)
	}
	for i, w := range want {
		if !strings.HasPrefix(sortedCopy(q)[i], w) {
			t.Errorf("quarantine = %q; want entries beginning %q", q, want)
		}
	}
	if n := e.taskCount(); n != 2 {
		t.Errorf("tasks = %d; want 2 (t of tasks.jsonl, and in of the rollouts)", n)
	}
}

// TestEmacsSaveRetiresRemovedTasks: Emacs saves by renaming the file to its backup name
// (tasks.jsonl~) and writing a new one: the tasks the edit removed are retired, and nothing is
// quarantined. (A sibling of TestEditorFilesInCatalogAreIgnored that held before it too: the
// renamed backup listed no rows.)
func TestEmacsSaveRetiresRemovedTasks(t *testing.T) {
	e := newEnv(t, Options{ReadCatalogFile: readStray})
	e.write("catalog/tasks.jsonl", `{"env":"e","task":"a"}`+"\n"+`{"env":"e","task":"b"}`+"\n")
	e.scan()
	if err := os.Rename(e.path("catalog/tasks.jsonl"), e.path("catalog/tasks.jsonl~")); err != nil {
		t.Fatal(err)
	}
	e.write("catalog/tasks.jsonl", `{"env":"e","task":"a"}`+"\n")
	e.scan()
	var retired map[storage.TaskKey]bool
	if err := e.db.View(func(r *storage.Reader) error {
		var err error
		retired, err = r.Retired()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(retired) != 1 || !retired[storage.TaskKey{Env: "e", Task: "b"}] {
		t.Errorf("retired %v; want e/b alone", retired)
	}
	if q := e.reasons(); len(q) != 0 {
		t.Errorf("quarantine = %q; want none", q)
	}
}
