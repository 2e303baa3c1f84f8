package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutDescriptorOfTheDatabaseUnderAnotherNameRefused (review11): hostile8 (c918d49) writes
// `--out /dev/stdout` (or /dev/fd/N, /proc/self/fd/N) through the descriptor itself, in place,
// at its offset; the guard that keeps --out off the database compares resolved paths. A
// descriptor open on the database under another name (a hard link: `ln DIR/envsched.db
// /backup/db; envsched export --out /dev/stdout 1<>/backup/db`) passes the guard and the export is
// written over the database's first pages: `envsched stats` then says "invalid database". Before
// c918d49 the output was renamed over the path, which replaces a hard link's name and leaves the
// database whole. Comparing the file's identity (os.SameFile of the descriptor's file and the
// database) would refuse it, as daemonFile already does for DIR/status.json.
func TestOutDescriptorOfTheDatabaseUnderAnotherNameRefused(t *testing.T) {
	dir := exchangeDir(t)
	if code, _, msg := runApp("ingest", "--dir", dir); code != exitOK {
		t.Fatalf("ingest: exit %d: %s", code, msg)
	}
	db := filepath.Join(dir, "envsched.db")
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "backup.db")
	if err := os.Link(db, link); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	f, err := os.OpenFile(link, os.O_RDWR, 0) // as a shell's 1<>link opens it
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := fmt.Sprintf("/proc/self/fd/%d", f.Fd())
	code, _, errOut := opsApp(t, "export", "--dir", dir, "--what", "tasks", "--out", out)
	after, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf("export --out %s (the database under another name): exit %d %q, and the database's bytes changed: it was written over",
			out, code, strings.TrimSpace(errOut))
	}
	if code != exitUsage {
		t.Errorf("export --out the database's descriptor under another name: exit %d; want 2, as for the database's own path", code)
	}
}
