package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRemountedUnderAnotherDeviceCountsOnce: an exchange folder on a disk that is mounted again
// under another device number (the same ext4 image attached to a second loop device, as a cloud
// volume or USB disk re-attached, or an NFS or overlay mount made again, gets a new number)
// keeps every file's inode and birth time, and each rollout counts once. envsched took the
// device number for part of each file's identity: every rollout and catalogue file was a new
// file, read again from its start, and each rollout without a rollout_id counted twice (100
// rollouts written, 201 seen after one more line).
func TestRemountedUnderAnotherDeviceCountsOnce(t *testing.T) {
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "SKIPPED e2e TestRemountedUnderAnotherDeviceCountsOnce: it mounts a loop device and runs only as root")
		t.Skip("mounts a loop device: root only")
	}
	for _, tool := range []string{"mkfs.ext4", "losetup", "mount", "umount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: %v", tool, err)
		}
	}
	run := func(name string, args ...string) string {
		t.Helper()
		out, err := exec.Command(name, args...).CombinedOutput()
		if err != nil {
			t.Skipf("%s %v: %v: %s (loop devices cannot be used here)", name, args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	work := t.TempDir()
	img, mnt := filepath.Join(work, "disk.img"), filepath.Join(work, "mnt")
	must(t, os.Mkdir(mnt, 0o755))
	f, err := os.Create(img)
	must(t, err)
	must(t, f.Truncate(64<<20))
	must(t, f.Close())
	run("mkfs.ext4", "-q", "-F", img)
	first := run("losetup", "-f", "--show", img)
	t.Cleanup(func() { exec.Command("losetup", "-d", first).Run() })
	run("mount", first, mnt)
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })

	dir := filepath.Join(mnt, "x")
	ensureCatalog(t, dir)
	must(t, os.MkdirAll(filepath.Join(dir, "rollouts"), 0o755))
	var b strings.Builder
	for i := range 100 { // no rollout_id: nothing but the file's place keeps a line from counting twice
		fmt.Fprintf(&b, `{"env":"env-%d","task_id":"task-%d","reward":%d,"step":1}`+"\n", i%4, i%97, i%2)
	}
	path := filepath.Join(dir, "rollouts", "r.jsonl")
	must(t, os.WriteFile(path, []byte(b.String()), 0o644))
	if out, err := execCommand([]string{"ingest", "--dir", dir}).CombinedOutput(); err != nil {
		t.Fatalf("ingest: %v\n%s", err, out)
	}
	before := statOf(t, path)
	run("umount", mnt)
	// The first loop device stays attached, so the second one has another number.
	second := run("losetup", "-f", "--show", img)
	t.Cleanup(func() { exec.Command("losetup", "-d", second).Run() })
	run("mount", second, mnt)
	after := statOf(t, path)
	if after.Dev == before.Dev || after.Ino != before.Ino {
		t.Fatalf("device %d inode %d before, %d and %d after: the case was not set up", before.Dev, before.Ino,
			after.Dev, after.Ino)
	}
	af, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	_, err = af.WriteString(`{"env":"env-0","task_id":"task-0","reward":1,"step":2}` + "\n")
	must(t, err)
	must(t, af.Close())

	d := start(t, dir, opts{})
	d.waitReady()
	writeRequest(t, dir, "r1", `{"size": 4}`)
	if got := rolloutsSeen(t, waitBatch(t, d, "r1")); got != 101 {
		t.Errorf("rollouts_seen %d after the remount; want 101 (100 written before it, 1 after)\nstderr:\n%s",
			got, tail(d.stderr.String(), 3000))
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("exit %d", code)
	}
	run("umount", mnt)
}

// statOf is the device and inode of path.
func statOf(t *testing.T, path string) *syscall.Stat_t {
	t.Helper()
	fi, err := os.Stat(path)
	must(t, err)
	return fi.Sys().(*syscall.Stat_t)
}
