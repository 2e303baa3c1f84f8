package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A request file the daemon's user may not read gets an error file that says to make it
// readable (it said to write a plain file, not a link, which it was), and is answered once it
// is readable, its error file removed. Runs the daemon as nobody when the tests run as root.
func TestUnreadableRequestSaysWhy(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run the daemon as another user")
	}
	dir := t.TempDir()
	ensureCatalog(t, dir)
	runAsNobody(t, dir)
	d := start(t, dir, opts{unprivileged: true, args: []string{"--rescan-interval", "100ms"}})
	d.waitReady()
	path := filepath.Join(dir, "requests", "locked.json")
	tmp := filepath.Join(dir, "requests", ".locked.json.tmp")
	must(t, os.WriteFile(tmp, []byte(`{"size": 2}`), 0o600)) // root's, and only root may read it
	must(t, os.Rename(tmp, path))
	errPath := filepath.Join(dir, "batches", "locked.error.json")
	waitUntil(t, "the error file", func() bool { _, err := os.Stat(errPath); return err == nil })
	msg, _ := os.ReadFile(errPath)
	if !strings.Contains(string(msg), "permission denied") || !strings.Contains(string(msg), "make it readable") ||
		strings.Contains(string(msg), "not a link") {
		t.Errorf("error file %s", msg)
	}
	must(t, os.Chmod(path, 0o644))
	waitBatch(t, d, "locked")
	waitUntil(t, "the error file removed", func() bool { _, err := os.Stat(errPath); return err != nil })
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}
