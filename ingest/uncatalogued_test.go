package ingest

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// TestUncataloguedTaskIsNamedInTheLog: a trainer that writes a task's id or environment otherwise
// than the catalogue (T1 for t1, Retail for retail, an NFD twin) had its rollouts counted for a
// task of their own without a word, while the catalogued task stayed untried. The log now names
// each such task once, with the catalogued one it reads as, shown so that the two are seen to
// differ; past maxLogged one line says the rest are not itemised. A database without a
// catalogue logs nothing of the kind, and neither do rollouts of catalogued tasks.
func TestUncataloguedTaskIsNamedInTheLog(t *testing.T) {
	var log bytes.Buffer
	e := newEnv(t, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	e.write("rollouts/a.jsonl", `{"env":"retail","task":"t1","reward":1}`+"\n")
	e.scan()
	if strings.Contains(log.String(), "not in the catalogue") {
		t.Fatalf("no catalogue, yet a task was said not to be in it:\n%s", log.String())
	}

	e.write("catalog/c.jsonl", `{"env":"retail","task_id":"t1","text":"return an order"}`+"\n"+
		`{"env":"retail","task_id":"caf\u00e9","text":"coffee"}`+"\n")
	e.scan()
	e.write("rollouts/b.jsonl", `{"env":"retail","task":"T1","reward":1}`+"\n"+
		`{"env":"Retail","task":"t1","reward":0}`+"\n"+
		`{"env":"retail","task":"cafe\u0301","reward":0}`+"\n"+
		`{"env":"retail","task":"t1","reward":0}`+"\n")
	e.scan()
	out := log.String()
	for _, want := range []string{
		`env=retail task=T1 catalogued_env=retail catalogued_task=t1`,
		`env=Retail task=t1 catalogued_env=retail catalogued_task=t1`,
		`env=retail task="\"cafe\\u0301\"" catalogued_env=retail catalogued_task="\"caf\\u00e9\""`,
	} {
		if n := strings.Count(out, want); n != 1 {
			t.Errorf("%q in the log %d times, want once:\n%s", want, n, out)
		}
	}
	if n := strings.Count(out, "not in the catalogue"); n != 3 {
		t.Errorf("%d tasks said not to be in the catalogue, want 3:\n%s", n, out)
	}

	var lines strings.Builder
	for i := range maxLogged + 5 {
		fmt.Fprintf(&lines, `{"env":"retail","task":"u%d","reward":1}`+"\n", i)
	}
	e.write("rollouts/c.jsonl", lines.String())
	e.scan()
	e.scan()
	out = log.String()
	if n := strings.Count(out, "rollouts of a task not in the catalogue"); n != maxLogged {
		t.Errorf("%d tasks logged one by one, want %d (maxLogged):\n%s", n, maxLogged, out)
	}
	if n := strings.Count(out, "more tasks not in the catalogue"); n != 1 {
		t.Errorf("the line for the rest logged %d times, want once:\n%s", n, out)
	}
	if got := e.counters().Rollouts; got != int64(1+4+maxLogged+5) {
		t.Errorf("%d rollouts stored, want %d: the warning must not drop any", got, 1+4+maxLogged+5)
	}
}
