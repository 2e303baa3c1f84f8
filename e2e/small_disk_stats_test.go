package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestStatsBesideTheDaemonOnASmallDisk (hostile15's leftover): a snapshot copy had to leave at
// least 32 MiB free, so on a disk smaller than that every `envsched stats` beside the daemon
// failed (a 16 MiB tmpfs, 15.7 MiB free, a database of 0.2 MiB: exit 1, "not enough free space
// ... 32.0 MiB must stay free"), however small the copy. The floor is now a quarter of the
// filesystem when that is less (and at least what the daemon's file may take at its next
// growth); a copy that would leave less is still refused. Root only (it mounts a tmpfs).
func TestStatsBesideTheDaemonOnASmallDisk(t *testing.T) {
	mnt := smallTmpfs(t, "16m")
	dir := filepath.Join(mnt, "x")
	writeRollouts(t, dir, "a.jsonl", "a", 300)
	d := start(t, dir, opts{})
	d.waitReady()
	if got := barrier(t, d, "b"); got != 300 {
		t.Fatalf("rollouts_seen %d; want 300", got)
	}
	out, err := execCommand([]string{"stats", "--dir", dir, "--json"}).CombinedOutput()
	if err != nil {
		t.Fatalf("stats beside the daemon on a 16 MiB disk: %v\n%s", err, out)
	}
	var st struct {
		Totals struct {
			Rollouts int64 `json:"rollouts"`
		} `json:"totals"`
	}
	if err := json.Unmarshal(out, &st); err != nil || st.Totals.Rollouts != 300 {
		t.Errorf("stats --json: %v, rollouts %d; want 300\n%s", err, st.Totals.Rollouts, out)
	}
	// A disk nearly full still refuses the copy, and the daemon goes on.
	filler := filepath.Join(mnt, "filler")
	must(t, os.WriteFile(filler, make([]byte, 13<<20), 0o644))
	out, err = execCommand([]string{"stats", "--dir", dir}).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not enough free space") {
		t.Errorf("stats with 3 MiB free on a 16 MiB disk: %v; want refused\n%s", err, out)
	}
	must(t, os.Remove(filler))
	if got := barrier(t, d, "after"); got != 300 {
		t.Errorf("after: rollouts_seen %d; want 300", got)
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}
