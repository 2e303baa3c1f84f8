package daemon

import (
	"log/slog"
	"strings"
	"testing"
)

// The ingester's one record per quarantined line becomes one log line per file and reason with
// a count; other records pass through.
func TestQuarantineLogCountsByFileAndReason(t *testing.T) {
	var out logBuffer
	daemonLog := slog.New(slog.NewTextHandler(&out, nil))
	q := newQuarantineLog(daemonLog.Handler())
	ingestLog := slog.New(q)
	for range 500 {
		ingestLog.Warn("line quarantined", "path", "rollouts/a.jsonl", "offset", 1, "reason", "invalid JSON")
	}
	for range 3 {
		ingestLog.Warn("line quarantined", "path", "rollouts/a.jsonl", "reason", "missing reward")
		ingestLog.Warn("line quarantined", "path", "rollouts/b.jsonl", "reason", "invalid JSON")
	}
	ingestLog.Warn("more lines quarantined", "count", 40)
	ingestLog.Info("file renamed", "path", "rollouts/c.jsonl")
	q.flush(daemonLog)
	q.flush(daemonLog) // nothing new: no more lines

	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		`msg="file renamed" path=rollouts/c.jsonl`,
		`msg="quarantined lines" count=40`,
		`msg="quarantined lines" file=rollouts/a.jsonl reason="invalid JSON" count=500`,
		`msg="quarantined lines" file=rollouts/a.jsonl reason="missing reward" count=3`,
		`msg="quarantined lines" file=rollouts/b.jsonl reason="invalid JSON" count=3`,
	}
	if len(lines) != len(want) {
		t.Fatalf("%d log lines; want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d: %s\nwant it to contain %s", i, lines[i], w)
		}
	}
}
