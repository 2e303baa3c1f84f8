package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Readers in another PID namespace (a container or sidecar sharing the exchange folder) get
// their copies, and `envsched status` there says the daemon runs: the daemon took their process ids, which it cannot look up, for readers that
// are gone, and removed their requests and copies before they took them (4 of 6 such readers
// started together exited 3 after their wait). Needs unshare(1) and the right to make PID
// namespaces (root); skipped otherwise.
func TestReadersInAnotherPIDNamespace(t *testing.T) {
	if err := exec.Command("unshare", "--pid", "--fork", "--mount-proc", "true").Run(); err != nil {
		t.Skipf("cannot make a PID namespace here (unshare --pid --fork --mount-proc): %v", err)
	}
	dir := t.TempDir()
	d := start(t, dir, opts{})
	d.waitReady()
	const readers = 6
	var wg sync.WaitGroup
	errs := make([]string, readers)
	for i := range readers {
		wg.Go(func() {
			cmd := exec.Command("unshare", "--pid", "--fork", "--mount-proc", binary, "stats", "--dir", dir,
				"--snapshot-wait", "20s")
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Sprintf("%v: %s", err, tail(string(out), 400))
			}
		})
	}
	wg.Wait()
	for i, e := range errs {
		if e != "" {
			t.Errorf("reader %d in another PID namespace: %s", i, e)
		}
	}
	// `envsched status` there says it runs: it looked the daemon's pid up among its own
	// processes, found none, and said NOT RUNNING with exit 1.
	out, err := exec.Command("unshare", "--pid", "--fork", "--mount-proc", binary, "status", "--dir", dir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), ": running") {
		t.Errorf("status in another PID namespace: %v\n%s", err, out)
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}
