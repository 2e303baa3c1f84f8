package e2e

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExcludedUnknownEnvIsLoggedOnce (newuser14): an exclude_envs name that is no environment
// excludes nothing (PROTOCOL.md, section 5: a trainer may exclude one not in its catalogue yet),
// so a misspelt held-out environment (`env-1x` for `env-1`) was trained on without a word. The
// answer is unchanged; the log names such a name once per run, with the environment meant.
func TestExcludedUnknownEnvIsLoggedOnce(t *testing.T) {
	dir := t.TempDir()
	d := start(t, dir, opts{})
	d.waitReady()
	for _, id := range []string{"r1", "r2"} {
		writeRequest(t, dir, id, `{"size": 2, "exclude_envs": ["env-1x", "env-2"]}`)
		waitBatch(t, d, id)
	}
	waitUntil(t, "the warning", func() bool {
		return strings.Contains(d.stderr.String(), "exclude_envs names no environment envsched knows")
	})
	time.Sleep(200 * time.Millisecond) // a second line, were there one
	log := d.stderr.String()
	if n := strings.Count(log, "exclude_envs names no environment"); n != 1 {
		t.Errorf("%d warnings for one name in two requests; want 1:\n%s", n, tail(log, 3000))
	}
	for _, want := range []string{`"name":"env-1x"`, `"did_you_mean":"env-1"`} {
		if !strings.Contains(log, want) {
			t.Errorf("the warning does not say %s:\n%s", want, tail(log, 3000))
		}
	}
	if strings.Contains(log, `"name":"env-2"`) {
		t.Errorf("env-2, a known environment, was warned about:\n%s", tail(log, 3000))
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}
