package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startCommand runs envsched with args (not `run`), its log copied, and SIGSTOPped at the first
// log write holding stopAt (see stopper).
func startCommand(t *testing.T, dir, stopAt string, env []string, args ...string) *daemon {
	t.Helper()
	return startCmd(t, dir, stopAt, env, exec.Command(binary, args...))
}

// SIGINT and SIGTERM (SIGHUP takes the same path) during `envsched ingest` stop it after a commit with exit code 1 and
// a message that says what was kept and to run it again; the run again reads the rest, and every
// rollout is stored once. Without a handler the signal killed the process outright (no message,
// exit by signal). The signal comes while the process is stopped at its first commit's progress
// line, so it always lands mid-backlog.
func TestIngestInterrupted(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			ensureCatalog(t, dir)
			var ids []string
			for i := range 8 {
				ids = append(ids, writeRollouts(t, dir, fmt.Sprintf("big/f%d.jsonl", i), fmt.Sprint("b", i), 20000)...)
			}
			d := startCommand(t, dir, "ingest progress", []string{"ENVSCHED_TEST_PROGRESS=1ns"}, "ingest", "--dir", dir)
			select {
			case <-d.stopped:
			case <-d.done:
				t.Fatalf("exited before a progress line\nstderr:\n%s", d.stderr.String())
			case <-time.After(90 * time.Second):
				t.Fatalf("no progress line\nstderr:\n%s", d.stderr.String())
			}
			d.cmd.Process.Signal(sig)
			d.cmd.Process.Signal(syscall.SIGCONT)
			if code := d.wait(); code != 1 || !strings.Contains(d.stderr.String(), "interrupted by a signal") ||
				!strings.Contains(d.stderr.String(), "run `envsched ingest` again") {
				t.Fatalf("%v during ingest: exit %d; want 1 and a message\nstderr:\n%s", sig, code, tail(d.stderr.String(), 2000))
			}
			f := readDB(t, dir)
			if f.check != nil {
				t.Errorf("database after the interrupt: %v", f.check)
			}
			if f.counters.Rollouts == 0 || f.counters.Rollouts == int64(len(ids)) {
				t.Fatalf("%d of %d rollouts committed: the interrupt was not mid-backlog\nstderr:\n%s", f.counters.Rollouts, len(ids), tail(d.stderr.String(), 3000))
			}
			out, err := exec.Command(binary, "ingest", "--dir", dir).CombinedOutput()
			if err != nil {
				t.Fatalf("ingest again: %v\n%s", err, out)
			}
			want := fmt.Sprintf("%d new rollouts", int64(len(ids))-f.counters.Rollouts)
			if !strings.Contains(string(out), want) {
				t.Errorf("ingest again: %s; want %s", out, want)
			}
			checkExactlyOnce(t, dir, ids)
		})
	}
}
