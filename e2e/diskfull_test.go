package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A full disk stops the daemon with exit 1 and a message naming the file; after space is freed
// the next start answers the request and the database is intact. It needs a small tmpfs, so
// it runs only as root; otherwise it is skipped, said on standard error even without -v. As root
// a tmpfs that cannot be mounted is a failure: the case could not be exercised.
func TestFullDiskStopsCleanly(t *testing.T) {
	mnt := smallTmpfs(t, "8m")
	dir := filepath.Join(mnt, "x")
	ids := writeRollouts(t, dir, "a.jsonl", "a", 200)
	d := start(t, dir, opts{args: []string{"--status-interval", "1h"}})
	d.waitReady()
	writeRequest(t, dir, "before", `{}`)
	waitBatch(t, d, "before")

	// The next request is ready under a temporary name; then the disk fills; then it is renamed
	// into place (a rename needs no free space).
	tmp := filepath.Join(dir, "requests", ".full.json.tmp")
	must(t, os.WriteFile(tmp, []byte(`{}`), 0o644))
	filler := filepath.Join(mnt, "filler")
	fill(t, filler)
	must(t, os.Rename(tmp, filepath.Join(dir, "requests", "full.json")))

	if code := d.wait(); code != 1 {
		t.Fatalf("exit %d on a full disk; want 1\nstderr:\n%s", code, d.stderr.String())
	}
	if msg := d.stderr.String(); !strings.Contains(msg, "no space left on device") {
		t.Errorf("the message does not say the disk is full:\n%s", tail(msg, 2000))
	}
	must(t, os.Remove(filler))
	d = start(t, dir, opts{})
	waitBatch(t, d, "full")
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
	checkExactlyOnce(t, dir, ids)
	if left := leftovers(t, dir); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// fill writes path until the filesystem is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	must(t, err)
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill: %v", err)
			}
			break
		}
	}
	// Smaller writes take the last partial blocks.
	for _, err := f.Write(buf[:512]); err == nil; _, err = f.Write(buf[:512]) {
	}
}

// smallTmpfs mounts a tmpfs of size (mount's size=, e.g. "8m") for the test and returns its
// path; it is unmounted at the end. It needs root: otherwise the test is skipped, said on
// standard error even without -v. As root a tmpfs that cannot be mounted is a failure: the case
// could not be exercised.
func smallTmpfs(t *testing.T, size string) string {
	t.Helper()
	mnt := t.TempDir()
	if os.Geteuid() != 0 {
		fmt.Fprintf(os.Stderr, "SKIPPED e2e %s: it mounts a tmpfs and runs only as root\n", t.Name())
		t.Skip("it mounts a tmpfs and runs only as root")
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Fatalf("running as root but cannot mount a tmpfs (%v: %s): the case was not exercised", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	return mnt
}
