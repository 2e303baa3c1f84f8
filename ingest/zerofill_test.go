package ingest

import (
	"os"
	"strings"
	"testing"
)

// TestLinesAfterACrashsZeros: after a power loss a file system can leave a rollout file longer
// than its data, the end read back as zeros (the length reached the disk, the appended bytes did
// not), and the trainer, restarted, appends after them with no newline between. The first line
// written after the restart was read together with the zeros as one line, "invalid JSON", and
// its rollout was lost. Now it counts; a line the crash cut short (its start written, zeros
// after) is set aside as torn, apart from the line after the zeros.
func TestLinesAfterACrashsZeros(t *testing.T) {
	e := newEnv(t, Options{})
	line := func(task string) string { return `{"env":"e","task":"` + task + `","reward":1}` + "\n" }
	e.write("rollouts/r.jsonl", line("a")+line("b"))
	e.scan()
	zeros := func(n int64) {
		st, err := os.Stat(e.path("rollouts/r.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(e.path("rollouts/r.jsonl"), st.Size()+n); err != nil {
			t.Fatal(err)
		}
	}
	zeros(4096) // whole lines lost: zeros from a line's start
	e.scan()    // zeros without a newline: an unfinished line, waiting
	e.append("rollouts/r.jsonl", line("c"))
	e.append("rollouts/r.jsonl", `{"env":"e","task":"torn","rew`) // a line cut short
	zeros(700)
	e.append("rollouts/r.jsonl", line("d")+"\x00\x00\n"+line("e"))
	e.scan()
	var tasks []string
	for _, r := range e.rollouts() {
		tasks = append(tasks, r.Task)
	}
	if got := strings.Join(tasks, ","); got != "a,b,c,d,e" {
		t.Errorf("rollouts %s; want a,b,c,d,e", got)
	}
	q := e.reasons()
	if len(q) != 1 || !strings.HasSuffix(q[0], ":"+ReasonTorn) {
		t.Errorf("quarantine %q; want the torn line alone", q)
	}
	e.reopen()
	e.scan()
	if n := len(e.rollouts()); n != 5 {
		t.Errorf("after a restart %d rollouts; want 5, each once", n)
	}
}

// TestCatalogueRowAfterZerosIsListed (found by review10): the row written after a crash's zeros
// was stored as a task by run.line but left out of its file's list by listed(), which read the
// whole framed line as one bad row, so the task just stored was retired in the same scan. Both
// now split the line alike (afterZeros).
func TestCatalogueRowAfterZerosIsListed(t *testing.T) {
	e := newEnv(t, Options{ReadCatalogFile: readStray})
	e.write("catalog/a.jsonl", `{"env":"e","task":"a1"}`+"\n"+`{"env":"e","ta`+"\x00\x00\x00"+`{"env":"e","task":"a2"}`+"\n")
	e.scan()
	if r := e.retired(); len(r) != 0 {
		t.Errorf("retired %v; want none (a2 is listed after the zeros)", r)
	}
	if n := e.taskCount(); n != 2 {
		t.Errorf("%d tasks; want a1 and a2", n)
	}
}
