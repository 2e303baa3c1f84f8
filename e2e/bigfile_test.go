package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
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
