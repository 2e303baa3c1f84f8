package e2e

import (
	"bytes"
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

// TestSnapshotSweepSurvivesAClockJump: the daemon removed every file in DIR/snapshots older than
// 15 minutes by its modification time, so a clock set forward by that much made a live reader's
// fresh request (being written) or copy look stale: it was removed and the reader waited in vain. Here a reader
// (a live process) has a request being written and a copy whose times are an hour back, as after such a jump;
// the daemon's sweep at start removes an old file of another name and keeps the reader's.
func TestSnapshotSweepSurvivesAClockJump(t *testing.T) {
	reader := exec.Command("sleep", "120")
	must(t, reader.Start())
	t.Cleanup(func() { reader.Process.Kill(); reader.Wait() })
	pid := reader.Process.Pid
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	since, err := strconv.ParseUint(fields[19], 10, 64)
	must(t, err)

	dir := t.TempDir()
	folder := filepath.Join(dir, "snapshots")
	must(t, os.MkdirAll(folder, 0o755))
	live := []string{fmt.Sprintf(".r%d-s%d-00112233.want.tmp-1", pid, since), fmt.Sprintf("r%d-s%d-44556677.db", pid, since)}
	long := time.Now().Add(-time.Hour)
	for _, name := range append([]string{"left-by-someone.db"}, live...) {
		p := filepath.Join(folder, name)
		must(t, os.WriteFile(p, []byte("x"), 0o600))
		must(t, os.Chtimes(p, long, long))
	}
	d := start(t, dir, opts{})
	d.waitReady()
	waitUntil(t, "the sweep of the old file", func() bool {
		_, err := os.Stat(filepath.Join(folder, "left-by-someone.db"))
		return os.IsNotExist(err)
	})
	for _, name := range live {
		if _, err := os.Stat(filepath.Join(folder, name)); err != nil {
			t.Errorf("the live reader's %s was removed: %v", name, err)
		}
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}

// TestSnapshotErrorNamesTheFolder: the daemon names the snapshot folder's files through a
// descriptor (/proc/self/fd/N/NAME), and its error files and log lines said that path ("rename
// /proc/self/fd/7/.x1.db.tmp-... /proc/self/fd/7/x1.db: file exists"), which means nothing to the
// one reading them. They name DIR/snapshots now. The copy here cannot be renamed into place.
func TestSnapshotErrorNamesTheFolder(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "snapshots")
	must(t, os.MkdirAll(filepath.Join(folder, "x1.db", "in"), 0o755))
	d := start(t, dir, opts{})
	d.waitReady()
	must(t, os.WriteFile(filepath.Join(folder, ".x1.want.tmp"), nil, 0o644))
	must(t, os.Rename(filepath.Join(folder, ".x1.want.tmp"), filepath.Join(folder, "x1.want")))
	var msg []byte
	waitUntil(t, "x1.error", func() bool {
		var err error
		msg, err = os.ReadFile(filepath.Join(folder, "x1.error"))
		return err == nil
	})
	for what, text := range map[string]string{"x1.error": string(msg), "the log": d.stderr.String()} {
		if strings.Contains(text, "/proc/self/fd") || !strings.Contains(text, folder+"/x1.db") {
			t.Errorf("%s does not name %s: %s", what, folder, tail(text, 2000))
		}
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}
