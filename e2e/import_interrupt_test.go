package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// `catalog import` interrupted (SIGTERM; Ctrl-C's SIGINT likewise) while it copies and checks
// the source removes its temporary copy in DIR/catalog and exits 1 saying nothing was imported.
// Killed by the signal, it left `.NAME.tmp-X`, as large as the source, for good: a dot name no
// envsched reads, removes or reports.
func TestInterruptedImportLeavesNoCopy(t *testing.T) {
	src := filepath.Join(t.TempDir(), "big.jsonl")
	f, err := os.Create(src)
	must(t, err)
	w := bufio.NewWriter(f)
	for i := range 400000 {
		fmt.Fprintf(w, `{"env": "env-%d", "task_id": %d, "text": "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu"}`+"\n", i%20, i)
	}
	must(t, w.Flush())
	must(t, f.Close())
	dir := filepath.Join(t.TempDir(), "x")
	cmd := execCommand([]string{"catalog", "import", "--dir", dir, src})
	msg := interruptOnceSeen(t, cmd, filepath.Join(dir, "catalog", ".big.jsonl.tmp-*"), "import")
	entries, err := os.ReadDir(filepath.Join(dir, "catalog"))
	must(t, err)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if len(left) != 0 {
		t.Errorf("left in DIR/catalog after the interrupt: %v (exit %d: %s)", left, cmd.ProcessState.ExitCode(), msg.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(msg.String(), "interrupted") {
		t.Errorf("exit %d, %q; want 1 saying it was interrupted", code, msg.String())
	}
}

// `export --out FILE` interrupted while it writes removes its temporary file beside FILE and
// exits 1; killed by the signal, it left `.FILE.tmp-X` there for good (`report` likewise).
func TestInterruptedExportLeavesNoFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x")
	writeRollouts(t, dir, "a.jsonl", "a", 200000)
	ensureCatalog(t, dir)
	if out, err := execCommand([]string{"ingest", "--dir", dir}).CombinedOutput(); err != nil {
		t.Fatalf("ingest: %v\n%s", err, out)
	}
	outDir := t.TempDir()
	cmd := execCommand([]string{"export", "--dir", dir, "--what", "rollouts", "--out", filepath.Join(outDir, "r.jsonl")})
	msg := interruptOnceSeen(t, cmd, filepath.Join(outDir, ".r.jsonl.tmp-*"), "export")
	entries, err := os.ReadDir(outDir)
	must(t, err)
	for _, e := range entries {
		if e.Name() != "r.jsonl" { // done just before the signal: the whole file
			t.Errorf("left beside --out after the interrupt: %s (exit %d: %s)", e.Name(), cmd.ProcessState.ExitCode(), msg.String())
		}
	}
}

// interruptOnceSeen starts cmd, sends it SIGTERM as soon as a file matching pattern (its
// temporary file) exists, and waits for it to end; it returns what cmd printed. The test is
// skipped when cmd ends before the file is seen (the machine too fast for the source).
func interruptOnceSeen(t *testing.T, cmd *exec.Cmd, pattern, what string) *lockedBuffer {
	t.Helper()
	msg := new(lockedBuffer)
	cmd.Stdout, cmd.Stderr = msg, msg
	must(t, cmd.Start())
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	for {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			break
		}
		select {
		case <-exited:
			t.Skipf("the %s was done before its temporary file was seen (%s)", what, msg.String())
		case <-time.After(time.Millisecond):
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the interrupted %s did not end", what)
	}
	return msg
}

// `compact` interrupted (SIGTERM) while it writes the compacted copy removes the copy and exits
// 1 saying the database is as it was (hostile15): killed by the signal (exit 143, nothing
// said), it left `.envsched.db.tmp-X` beside the database for good, up to the database's size
// (a --db outside DIR is never swept). The database is byte for byte unchanged.
func TestInterruptedCompactLeavesNoCopy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x")
	writeRollouts(t, dir, "a.jsonl", "a", 200000)
	ensureCatalog(t, dir)
	if out, err := execCommand([]string{"ingest", "--dir", dir}).CombinedOutput(); err != nil {
		t.Fatalf("ingest: %v\n%s", err, out)
	}
	db := filepath.Join(dir, "envsched.db")
	before, err := os.ReadFile(db)
	must(t, err)
	cmd := execCommand([]string{"compact", "--dir", dir})
	msg := interruptOnceSeen(t, cmd, filepath.Join(dir, ".envsched.db.tmp-*"), "compaction")
	if m, _ := filepath.Glob(filepath.Join(dir, ".envsched.db.tmp-*")); len(m) > 0 {
		t.Errorf("left beside the database after the interrupt: %v (exit %d: %s)", m, cmd.ProcessState.ExitCode(), msg.String())
	}
	after, err := os.ReadFile(db)
	must(t, err)
	code := cmd.ProcessState.ExitCode()
	switch {
	case code == 0 && strings.Contains(msg.String(), "compacted"): // renamed just before the signal
	case code != 1 || !strings.Contains(msg.String(), "interrupted"):
		t.Errorf("exit %d, %q; want 1 saying it was interrupted", code, msg.String())
	case string(after) != string(before):
		t.Errorf("the database changed though the compaction was interrupted")
	}
}
