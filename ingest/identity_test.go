package ingest

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/envsched/envsched/storage"
)

// line returns a rollout line of env "e" for task, reward 1.
func line(task string) string { return `{"env":"e","task":"` + task + `","reward":1}` + "\n" }

func lines(tasks ...string) string {
	var b strings.Builder
	for _, t := range tasks {
		b.WriteString(line(t))
	}
	return b.String()
}

func stored1(tasks ...string) []string {
	out := make([]string, len(tasks))
	for i, t := range tasks {
		out[i] = "e/" + t + "=1"
	}
	return out
}

const f = "rollouts/run.jsonl"

// TestFileIdentity runs one case per rule of file identity; each case drives files and scans
// and says what must be stored (rollouts sorted, quarantine entries in order).
func TestFileIdentity(t *testing.T) {
	cases := []struct {
		name       string
		opt        Options
		run        func(e *env)
		want       []string // stored rollouts
		quarantine []string
	}{
		{"append", Options{}, func(e *env) {
			e.write(f, lines("a"))
			e.scan()
			e.append(f, lines("b"))
			e.scan()
		}, stored1("a", "b"), nil},
		{"truncate to zero, then new lines", Options{}, func(e *env) {
			e.write(f, lines("a", "b"))
			e.scan()
			e.write(f, "")
			e.scan()
			e.append(f, lines("c"))
			e.scan()
		}, stored1("a", "b", "c"), nil},
		{"truncate and rewrite shorter before a scan", Options{}, func(e *env) {
			e.write(f, lines("aaaa", "bbbb"))
			e.scan()
			e.write(f, lines("c"))
			e.scan()
		}, stored1("aaaa", "bbbb", "c"), nil},
		{"rewrite with new first bytes, longer", Options{}, func(e *env) {
			e.write(f, lines("a"))
			e.scan()
			e.write(f, lines("x", "y", "z"))
			e.scan()
		}, stored1("a", "x", "y", "z"), nil},
		{"rename inside the folder keeps its place", Options{}, func(e *env) {
			e.write(f, lines("a"))
			e.scan()
			mustRename(e, f, "rollouts/sub/moved.jsonl")
			e.append("rollouts/sub/moved.jsonl", lines("b"))
			e.scan()
			e.scan()
		}, stored1("a", "b"), nil},
		{"delete and re-create with the same first bytes", Options{}, func(e *env) {
			e.write(f, lines("a"))
			e.scan()
			mustRemove(e, f)
			e.scan()
			e.write(f, lines("a", "b"))
			e.scan()
		}, stored1("a", "a", "b"), nil},
		{"delete and re-create with different first bytes", Options{}, func(e *env) {
			e.write(f, lines("a"))
			e.scan()
			mustRemove(e, f)
			e.write(f, lines("c", "d"))
			e.scan()
		}, stored1("a", "c", "d"), nil},
		{"no final newline waits", Options{}, func(e *env) {
			e.write(f, lines("a")+`{"env":"e","task":"b","rew`)
			e.scan()
			if got := e.tasks(); !reflect.DeepEqual(got, stored1("a")) {
				e.t.Errorf("before the newline: stored %v", got)
			}
			e.append(f, `ard":1}`+"\n")
			e.scan()
		}, stored1("a", "b"), nil},
		{"CRLF", Options{}, func(e *env) {
			e.write(f, strings.ReplaceAll(lines("a", "b"), "\n", "\r\n"))
			e.scan()
		}, stored1("a", "b"), nil},
		{"blank lines are skipped", Options{}, func(e *env) {
			e.write(f, "\n  \n\t\r\n"+lines("a")+"\n")
			e.scan()
		}, stored1("a"), nil},
		{"bad JSON between good lines", Options{}, func(e *env) {
			e.write(f, lines("a")+"{not json\n"+lines("b"))
			e.scan()
		}, stored1("a", "b"), []string{f + "@34:invalid JSON"}},
		{"non-finite reward", Options{}, func(e *env) {
			e.write(f, lines("a")+`{"env":"e","task":"x","reward":1e999}`+"\n"+lines("b"))
			e.scan()
		}, stored1("a", "b"), []string{f + "@34:reward not finite"}},
		{"line over the size limit", Options{maxLine: 64, readBuf: 16}, func(e *env) {
			long := `{"env":"e","task":"` + strings.Repeat("x", 100) + `","reward":1}` + "\n"
			e.write(f, lines("a")+long+lines("b"))
			e.scan()
		}, stored1("a", "b"), []string{f + "@34:line too long"}},
		{"line over the size limit is bad before its newline, and never read again", Options{maxLine: 64, readBuf: 16}, func(e *env) {
			e.write(f, lines("a")+strings.Repeat("x", 200))
			e.scan()
			if q := e.reasons(); len(q) != 1 {
				e.t.Errorf("unfinished long line: quarantine %v; want it at once", q)
			}
			for range 2 { // neither a scan nor a restart reads its bytes again
				if s := e.scan(); s.FilesRead != 0 {
					e.t.Errorf("a scan with nothing new read %d files", s.FilesRead)
				}
				e.reopen()
			}
			e.append(f, strings.Repeat("y", 100))
			e.scan()
			e.reopen()
			e.append(f, strings.Repeat("z", 10)+"\n"+lines("b"))
			e.scan()
		}, stored1("a", "b"), []string{f + "@34:line too long"}},
		{"a long unfinished line rewritten shorter is read from the start", Options{maxLine: 64, readBuf: 16}, func(e *env) {
			e.write(f, lines("a")+strings.Repeat("x", 200))
			e.scan()
			e.write(f, lines("a")+lines("b"))
			e.scan()
		}, []string{"e/a=1", "e/a=1", "e/b=1"}, []string{f + "@34:line too long"}},
		{"dot and .tmp names are ignored at every level", Options{}, func(e *env) {
			e.write("rollouts/.hidden.jsonl", lines("h1"))
			e.write("rollouts/x.jsonl.tmp", lines("h2"))
			e.write("rollouts/.d/in.jsonl", lines("h3"))
			e.write("rollouts/d.tmp/in.jsonl", lines("h4"))
			e.write("rollouts/notes.txt", lines("h5"))
			e.write("rollouts/a/b/c/deep.jsonl", lines("deep"))
			e.scan()
		}, stored1("deep"), nil},
		{"duplicate rollout ids across files", Options{}, func(e *env) {
			e.write("rollouts/1.jsonl", `{"env":"e","task":"a","reward":1,"rollout_id":"r"}`+"\n")
			e.write("rollouts/2.jsonl", `{"env":"e","task":"a","reward":0,"rollout_id":"r"}`+"\n")
			e.scan()
			if c := e.counters(); c.Duplicates != 1 {
				e.t.Errorf("duplicates %d, want 1", c.Duplicates)
			}
		}, stored1("a"), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.opt)
			tc.run(e)
			if got := e.tasks(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("stored %v, want %v", got, tc.want)
			}
			if got := e.reasons(); !reflect.DeepEqual(got, tc.quarantine) {
				t.Errorf("quarantined %v, want %v", got, tc.quarantine)
			}
			e.reopen()
			if s := e.scan(); s.Rollouts != 0 || s.Quarantined != 0 {
				t.Errorf("a scan after reopening stored %+v; want nothing new", s)
			}
		})
	}
}

func mustRename(e *env, from, to string) {
	e.t.Helper()
	if err := os.MkdirAll(e.path(to)[:strings.LastIndex(e.path(to), "/")], 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.Rename(e.path(from), e.path(to)); err != nil {
		e.t.Fatal(err)
	}
}

func mustRemove(e *env, rel string) {
	e.t.Helper()
	if err := os.Remove(e.path(rel)); err != nil {
		e.t.Fatal(err)
	}
}

func TestCatalogRowUpdatesMetadata(t *testing.T) {
	e := newEnv(t, Options{})
	e.write("rollouts/r.jsonl", line("t1"))
	e.write("catalog/c.jsonl", `{"env":"e","task_id":"t1","text":"first"}`+"\n")
	e.scan()
	e.append("catalog/c.jsonl", `{"env":"e","task_id":"t1","text":"second","tools":["x"]}`+"\n"+
		`{"env":"e","task_id":"t2","text":"new"}`+"\n")
	s := e.scan()
	if s.TaskRows != 2 || s.NewTasks != 1 {
		t.Errorf("second scan %+v; want 2 catalogue rows, 1 new task", s)
	}
	var texts []string
	err := e.db.View(func(r *storage.Reader) error {
		return r.Tasks(true, func(ti storage.TaskInfo) error {
			texts = append(texts, ti.Task.Task+":"+ti.Text+":"+strings.Join(ti.Tools, ","))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"t1:second:x", "t2:new:"}; !reflect.DeepEqual(texts, want) {
		t.Errorf("tasks %v, want %v", texts, want)
	}
	envs, _ := e.db.Envs()
	if envs["e"].Tasks != 2 || envs["e"].TasksSeen != 1 {
		t.Errorf("env stats %+v; want 2 tasks, 1 seen", envs["e"])
	}
}
