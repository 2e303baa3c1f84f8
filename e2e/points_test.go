package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// writeRollouts appends n lines with ids prefix-i to DIR/rollouts/name and returns the ids.
func writeRollouts(t testing.TB, dir, name, prefix string, n int) []string {
	t.Helper()
	path := filepath.Join(dir, "rollouts", name)
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	must(t, err)
	defer f.Close()
	var b strings.Builder
	ids := make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("%s-%d", prefix, i)
		b.WriteString(rolloutLine(ids[i], i))
	}
	_, err = f.WriteString(b.String())
	must(t, err)
	return ids
}

// Each crash point, reached while answering, kills the process; a restart answers the request
// with what was stored (or answers it afresh when nothing was), sweeps the temporary file, and
// everything is counted once.
func TestCrashPoints(t *testing.T) { crashPoints(t, `{"size": 2}`, 0) }

// TestCrashPointsLargeAnswers is TestCrashPoints with answers larger than a part
// (storage's answerPartBytes, 900): stored as parts and a reference, they are served after a
// restart byte for byte as stored.
func TestCrashPointsLargeAnswers(t *testing.T) { crashPoints(t, `{"size": 24}`, 2000) }

// crashPoints runs the crash points with requests of body; every answer served after the
// restart has at least minBytes.
func crashPoints(t *testing.T, body string, minBytes int) {
	for _, point := range []string{"before-commit", "before-store", "after-commit", "before-rename", "before-dirsync",
		"before-rename:2", "before-store:3", "after-commit:3", "before-ingest-commit:2", "before-ingest-commit:4"} {
		t.Run(strings.ReplaceAll(point, ":", "-"), func(t *testing.T) {
			dir := t.TempDir()
			ids := writeRollouts(t, dir, "a.jsonl", "a", 300)
			rd := newReader(dir)
			ctx, stop := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			wg.Go(func() { rd.run(ctx) })
			defer func() { stop(); wg.Wait() }()

			d := start(t, dir, opts{env: []string{"ENVSCHED_CRASHPOINT=" + point}})
			var reqs []string
			for i := 0; !d.exited(); i++ {
				if i >= 5 {
					t.Fatalf("no crash at %s after 5 requests\nstderr:\n%s", point, d.stderr.String())
				}
				id := fmt.Sprintf("r%d", i)
				reqs = append(reqs, id)
				ids = append(ids, writeRollouts(t, dir, "b.jsonl", id, 50)...)
				writeRequest(t, dir, id, body)
				waitUntil(t, "answer or crash", func() bool {
					_, err := os.Stat(filepath.Join(dir, "batches", id+".json"))
					return err == nil || d.exited()
				})
			}
			d.wait()
			if ws := d.state.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("process ended with %v; want killed at the crash point\nstderr:\n%s", d.state,
					d.stderr.String())
			}
			if strings.HasPrefix(point, "before-rename") && len(leftovers(t, dir)) == 0 {
				t.Errorf("no temporary batch file at the crash before the rename")
			}
			// The batch file is written while its answer is stored and shown only after: at the
			// crash before the commit it is a temporary file. (A batch file shown before its
			// answer was stored would be left as it is by the restart, and checkAfterCrashes
			// finds its request without a stored answer.)
			if strings.HasPrefix(point, "before-store") && len(leftovers(t, dir)) == 0 {
				t.Errorf("no temporary batch file at the crash before the answer's commit")
			}

			d = start(t, dir, opts{})
			for _, id := range reqs {
				if n := len(waitBatch(t, d, id)); n < minBytes {
					t.Fatalf("batch %s has %d bytes; want at least %d", id, n, minBytes)
				}
			}
			writeRequest(t, dir, "after", `{}`)
			if got := rolloutsSeen(t, waitBatch(t, d, "after")); got != int64(len(ids)) {
				t.Errorf("rollouts_seen %d after restart; want %d", got, len(ids))
			}
			rd.pass()
			if code := d.signal(syscall.SIGTERM); code != 0 {
				t.Errorf("SIGTERM: exit %d", code)
			}
			checkAfterCrashes(t, dir, ids, append(reqs, "after"), rd)
		})
	}
}
