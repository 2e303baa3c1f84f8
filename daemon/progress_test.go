package daemon

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/envsched/envsched/ingest"
)

// TestProgressLogLinesAndTimeLeft: a pass logs a progress line once an interval has passed
// since the last one (none earlier), with lines, files, megabytes, rates and the time left at
// the rate so far, and an end line; a short pass other than the backlog logs nothing.
func TestProgressLogLinesAndTimeLeft(t *testing.T) {
	var out logBuffer
	clock := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	l := newProgressLog(slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}})), 2*time.Second, func() time.Time { return clock })
	step := func(d time.Duration, p ingest.Progress) { clock = clock.Add(d); l.update(p) }

	l.begin("backlog")
	step(time.Second, ingest.Progress{Done: 10e6, Total: 80e6, Lines: 100_000, FilesRead: 1, Files: 4})
	step(time.Second, ingest.Progress{Done: 20e6, Total: 80e6, Lines: 200_000, FilesRead: 1, Files: 4})
	step(time.Second, ingest.Progress{Done: 30e6, Total: 80e6, Lines: 300_000, FilesRead: 2, Files: 4})
	step(time.Second, ingest.Progress{Done: 40e6, Total: 80e6, Lines: 400_000, FilesRead: 2, Files: 4})
	clock = clock.Add(4 * time.Second)
	l.end(ingest.Summary{Rollouts: 799_990, Quarantined: 10})
	l.begin("change")
	step(time.Second, ingest.Progress{Done: 1, Total: 1, Lines: 1, FilesRead: 1, Files: 1})
	l.end(ingest.Summary{Rollouts: 1})
	l.begin("backlog") // a start-up with nothing to read
	clock = clock.Add(time.Second)
	l.end(ingest.Summary{})

	want := []string{
		`level=INFO msg="ingest progress" why=backlog lines=200000 files=1 files_total=4 mb=20 mb_total=80 elapsed=2s lines_per_s=100000 mb_per_s=10 eta=6s`,
		`level=INFO msg="ingest progress" why=backlog lines=400000 files=2 files_total=4 mb=40 mb_total=80 elapsed=4s lines_per_s=100000 mb_per_s=10 eta=4s`,
		`level=INFO msg="ingest done" why=backlog lines=400000 files=2 files_total=4 mb=40 mb_total=80 elapsed=8s lines_per_s=50000 mb_per_s=5 rollouts=799990 quarantined=10 duplicates=0`,
	}
	if got := strings.Split(strings.TrimSpace(out.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDaemonLogsBacklogProgress: the real daemon, started on a backlog, logs its progress and a
// line when the backlog is read (the interval is made tiny so that every commit logs).
func TestDaemonLogsBacklogProgress(t *testing.T) {
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "rollouts"), 0o755))
	for f := range 3 {
		var b strings.Builder
		for i := range 4000 {
			fmt.Fprintf(&b, `{"env": "env-%d", "task_id": "%d", "reward": %d}`+"\n", f, i%20, i%2)
		}
		must(t, os.WriteFile(filepath.Join(dir, "rollouts", fmt.Sprintf("r%d.jsonl", f)), []byte(b.String()), 0o644))
	}
	cfg := testConfig(dir, true)
	cfg.ProgressInterval = time.Nanosecond
	r := serveTest(t, cfg)
	writeRequest(t, dir, "after-backlog.json", `{"size": 2}`)
	r.batch("after-backlog")
	r.stop()
	logs := r.log.String()
	if !strings.Contains(logs, `msg="ingest progress" why=backlog`) || !strings.Contains(logs, "files_total=4") {
		t.Errorf("no backlog progress line:\n%s", logs)
	}
	if !strings.Contains(logs, `msg="ingest done" why=backlog lines=12060 files=4 files_total=4`) ||
		!strings.Contains(logs, "rollouts=12000") {
		t.Errorf("no line saying the backlog is read:\n%s", logs)
	}
}
