package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDirReplacedByLinkIsNotFollowed: the exchange directory replaced, while the daemon serves
// it (its database elsewhere), by a symbolic link to another exchange directory was followed:
// the daemon locked the other folder, counted its rollouts into this database, answered its
// request from this database and wrote its batch, status and snapshot folder there. A link in
// DIR's place is now never followed, as a linked folder inside DIR is not: nothing is read
// from it or written into it, and once DIR is a folder again the daemon goes on from where it
// was.
func TestDirReplacedByLinkIsNotFollowed(t *testing.T) {
	base := t.TempDir()
	dir, other := filepath.Join(base, "dir"), filepath.Join(base, "other")
	db := filepath.Join(base, "envsched.db")
	must(t, os.MkdirAll(filepath.Join(dir, "rollouts"), 0o755))
	var mine strings.Builder
	for i := range 10 {
		mine.WriteString(rolloutLine("mine-"+string(rune('a'+i)), i))
	}
	must(t, os.WriteFile(filepath.Join(dir, "rollouts", "r.jsonl"), []byte(mine.String()), 0o644))
	d := start(t, dir, opts{args: []string{"--db", db, "--rescan-interval", "200ms"}})
	d.waitReady()
	if got := barrier(t, d, "before"); got != 10 {
		t.Fatalf("before the swap: rollouts_seen %d; want 10", got)
	}

	// Another exchange directory, with rollouts and a request of its own.
	must(t, os.MkdirAll(filepath.Join(other, "rollouts"), 0o755))
	ensureCatalog(t, other)
	var theirs strings.Builder
	for i := range 7 {
		theirs.WriteString(rolloutLine("theirs-"+string(rune('a'+i)), i))
	}
	must(t, os.WriteFile(filepath.Join(other, "rollouts", "o.jsonl"), []byte(theirs.String()), 0o644))
	writeRequest(t, other, "theirs", `{"size": 1}`)

	must(t, os.Rename(dir, dir+".away"))
	must(t, os.Symlink(other, dir))
	time.Sleep(1500 * time.Millisecond) // seven heartbeats, and the watcher's polls
	if d.exited() {
		t.Fatalf("the daemon stopped: %d\n%s", d.state.ExitCode(), tail(d.stderr.String(), 3000))
	}
	for _, name := range []string{"batches", "status.json", "snapshots"} {
		if _, err := os.Lstat(filepath.Join(other, name)); err == nil {
			t.Errorf("%s written into the folder the link leads to", name)
		}
	}
	if n := strings.Count(d.stderr.String(), "exchange directory is a symbolic link"); n != 1 {
		t.Errorf("the link logged %d times; want once", n)
	}

	// DIR a folder again: the daemon goes on with its own files, none of the other folder's.
	must(t, os.Remove(dir))
	must(t, os.Rename(dir+".away", dir))
	if got := barrier(t, d, "after"); got != 10 {
		t.Errorf("after DIR came back: rollouts_seen %d; want 10 (the other folder's 7 counted?)", got)
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d\n%s", code, tail(d.stderr.String(), 3000))
	}
	if _, err := os.Stat(filepath.Join(other, "batches", "theirs.json")); err == nil {
		t.Errorf("the other folder's request was answered from this database")
	}
}
