package snapshot

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestSweepKeepsALiveReadersFilesWhenTheClockJumps: the sweep took every file older than MaxAge
// by its modification time for an orphan, so a clock set forward by 15 minutes or more removed a
// live reader's fresh request or copy (the reader then waited for a copy that was gone). The
// files' times are moved back an hour here, as such a jump makes them look. A file of a live
// reader named with its start time now stays, whatever its times; one whose process id was
// reused by another process (the start time differs) goes, and so do old files of other names.
func TestSweepKeepsALiveReadersFilesWhenTheClockJumps(t *testing.T) {
	reader := exec.Command("sleep", "60")
	if err := reader.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reader.Process.Kill(); reader.Wait() })
	pid := reader.Process.Pid
	var start uint64
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		var ok bool
		if start, ok = startOf(pid); ok || time.Now().After(deadline) {
			break
		}
	}
	if start == 0 {
		t.Skip("no /proc/PID/stat here: the names carry no start time")
	}
	if o, ok := ownerOf(mustName(t)); !ok || o.pid != os.Getpid() || o.start == 0 {
		t.Fatalf("a request name of this process names %+v", o)
	}

	folder := t.TempDir()
	live := []string{fmt.Sprintf("r%d-s%d-0123abcd.want", pid, start), fmt.Sprintf("r%d-s%d-0123abcd.db", pid, start),
		fmt.Sprintf(".r%d-s%d-4567.want.tmp-89", pid, start)}
	stale := []string{fmt.Sprintf("r%d-s%d-0123abcd.db", pid, start+1), "notes.txt"}
	long := time.Now().Add(-time.Hour)
	for _, name := range append(append([]string{}, live...), stale...) {
		p := filepath.Join(folder, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, long, long); err != nil {
			t.Fatal(err)
		}
	}
	s := &server{folder: folder, opts: ServeOptions{Logger: slog.New(slog.DiscardHandler)}.withDefaults()}
	if !s.hold() {
		t.Fatal("hold")
	}
	s.sweep(time.Now())
	s.release()
	for _, name := range live {
		if _, err := os.Stat(filepath.Join(folder, name)); err != nil {
			t.Errorf("%s of a live reader removed by its age: %v", name, err)
		}
	}
	for _, name := range stale {
		if _, err := os.Stat(filepath.Join(folder, name)); err == nil {
			t.Errorf("%s not removed", name)
		}
	}
}

func mustName(t *testing.T) string {
	t.Helper()
	name, err := newName()
	if err != nil {
		t.Fatal(err)
	}
	return name
}
