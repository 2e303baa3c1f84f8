package ingest

import (
	"bytes"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"
)

// TestUnterminatedScoredRolloutIsLogged (review16): the unterminated-line log (run.unterminated)
// decides whether a rollout file's last bytes are a whole rollout with record.RolloutLike, the
// rule for a file named in both catalog/ and rollouts/, which takes a line with a `score`, a
// `prompt` and no step or group for a catalogue row. In rollouts/ alone the file is a rollout
// file: such a line is a rollout (it counts once its newline comes), and a trainer writing
// {"env","task_id","prompt","completion","score"} joined by "\n" lost its last rollout of every
// file without the log naming it.
func TestUnterminatedScoredRolloutIsLogged(t *testing.T) {
	var log bytes.Buffer
	e := newEnv(t, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	old := time.Now().Add(-time.Minute)
	e.write("rollouts/joined.jsonl", `{"env":"e","task_id":"1","prompt":"q1","completion":"a","score":1}`+"\n"+
		`{"env":"e","task_id":"2","prompt":"q2","completion":"b","score":0}`)
	if err := os.Chtimes(e.path("rollouts/joined.jsonl"), old, old); err != nil {
		t.Fatal(err)
	}
	e.scan()
	if n := e.counters().Rollouts; n != 1 {
		t.Fatalf("%d rollouts counted; want 1 (the line that ends in a newline): the case is not the one meant", n)
	}
	const msg = "rollout file ends in a whole rollout with no newline after it"
	if n := strings.Count(log.String(), msg); n != 1 {
		t.Errorf("logged %d times; want once, for rollouts/joined.jsonl (its last line is a whole rollout):\n%s", n, log.String())
	}
	e.append("rollouts/joined.jsonl", "\n")
	e.scan()
	if n := e.counters().Rollouts; n != 2 {
		t.Errorf("after the newline: %d rollouts counted; want 2 (the last line is a rollout)", n)
	}
}
