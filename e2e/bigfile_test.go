package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A huge file put where the daemon publishes (an 8 GB sparse batches/ID.error.json, older than
// its bad request) is replaced by the error file without being read: the daemon compared it
// with the error file by reading it whole, and ran out of memory (under a 2 GB address-space
// limit, as a container's would be: fatal error, exit 2). The request answered meanwhile with a
// batch proves the daemon still serves.
func TestHugeFileInBatchesIsNotRead(t *testing.T) {
	dir := t.TempDir()
	ensureCatalog(t, dir)
	for _, f := range []string{"requests", "batches"} {
		must(t, os.MkdirAll(filepath.Join(dir, f), 0o755))
	}
	must(t, os.WriteFile(filepath.Join(dir, "requests", "x.json"), []byte("bad"), 0o644))
	huge := filepath.Join(dir, "batches", "x.error.json")
	must(t, os.WriteFile(huge, nil, 0o644))
	if err := os.Truncate(huge, 8<<30); err != nil {
		t.Skipf("no sparse 8 GB file here: %v", err)
	}
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	must(t, os.Chtimes(huge, old, old))
	cmd := exec.Command("/bin/sh", "-c", `ulimit -v 2000000 && exec "$0" "$@"`, binary, "run", "--dir", dir,
		"--log-format", "json")
	d := startCmd(t, dir, "no such log line", nil, cmd)
	waitUntil(t, "the error file", func() bool {
		fi, err := os.Stat(huge)
		return d.exited() || err == nil && fi.Size() < 1<<20
	})
	if d.exited() {
		t.Fatalf("the daemon stopped: exit %d\n%s", d.state.ExitCode(), tail(d.stderr.String(), 1500))
	}
	if data, err := os.ReadFile(huge); err != nil || !strings.Contains(string(data), "not a JSON object") {
		t.Errorf("error file %q, %v", data, err)
	}
	writeRequest(t, dir, "good", `{"size": 2}`)
	waitBatch(t, d, "good")
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}

// A sparse rollout file of 8 GB (a line, a hole that reads as NUL bytes, a newline and a line),
// made while the daemon runs, is skipped past without reading the hole: the request written
// after it is answered, the two lines count and the line holding the hole is quarantined once.
// The daemon's read count (rchar of /proc/PID/io) shows the hole unread; it was read byte by
// byte (10 GB: 14 s during which every request waited).
func TestSparseRolloutFileIsNotRead(t *testing.T) {
	dir := t.TempDir()
	d := start(t, dir, opts{})
	d.waitReady()
	path := filepath.Join(dir, "rollouts", "sparse.jsonl")
	must(t, os.WriteFile(path, []byte(rolloutLine("sparse-0", 0)), 0o644))
	fi, err := os.Stat(path)
	must(t, err)
	if err := os.Truncate(path, fi.Size()+8<<30); err != nil {
		t.Skipf("no sparse 8 GB file here: %v", err)
	}
	appendFile(t, path, "\n"+rolloutLine("sparse-1", 1))
	writeRequest(t, dir, "after", `{"size": 2}`)
	var answer struct {
		RolloutsSeen int `json:"rollouts_seen"`
	}
	must(t, json.Unmarshal(waitBatch(t, d, "after"), &answer))
	if answer.RolloutsSeen != 2 {
		t.Errorf("the answer saw %d rollouts; want the 2 written before it", answer.RolloutsSeen)
	}
	waitUntil(t, "the quarantined line in status.json", func() bool {
		st, err := readStatus(dir)
		return err == nil && st.Quarantined == 1 && st.Rollouts == 2
	})
	if read := procRead(t, d.cmd.Process.Pid); read > 1<<30 {
		t.Errorf("the daemon read %d bytes: the 8 GB hole was read", read)
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}

// procRead is the bytes process pid has read (rchar of /proc/PID/io); the test is skipped
// where that is not there.
func procRead(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		t.Skipf("no /proc/PID/io: %v", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "rchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			must(t, err)
			return n
		}
	}
	t.Skip("no rchar in /proc/PID/io")
	return 0
}
