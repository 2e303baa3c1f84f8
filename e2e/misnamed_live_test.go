package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A rollout file written under a name envsched does not read (run.json, RUN.JSONL,
// run.jsonl.gz) while the daemon runs is named in its log, once, in both watch modes, as
// one there when it starts is. Only the full listing at start named such a file: the events and
// the periodic listings that hint a file while the daemon runs skipped it without a word, so a
// trainer that started writing rollouts/run.json after envsched saw its rollouts never count
// and nothing in the log until a restart.
func TestMisnamedRolloutFileWhileRunningIsLogged(t *testing.T) {
	for _, mode := range []string{"notify", "poll"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			o := opts{args: []string{"--rescan-interval", "100ms"}}
			if mode == "poll" {
				o.args = append(o.args, "--poll")
			}
			d := start(t, dir, o)
			d.waitReady()
			line := `{"env":"e0","task_id":"t1","reward":1}` + "\n"
			must(t, os.MkdirAll(filepath.Join(dir, "rollouts", "sub"), 0o755))
			names := []string{"run.json", "sub/RUN.JSONL", "run.jsonl.gz"}
			for _, name := range append(names, "notes.txt", ".hidden.json", "run.json.tmp") {
				must(t, os.WriteFile(filepath.Join(dir, "rollouts", name), []byte(line), 0o644))
			}
			waitFor(t, 15*time.Second, "the misnamed files named in the log", func() bool {
				for _, name := range names {
					if !strings.Contains(d.stderr.String(), `"path":"rollouts/`+name+`"`) {
						return false
					}
				}
				return true
			})
			writeRequest(t, dir, "after", `{"size": 2}`) // a barrier's full listing: named once still
			waitBatch(t, d, "after")
			log := d.stderr.String()
			for _, name := range names {
				if n := strings.Count(log, `"path":"rollouts/`+name+`"`); n != 1 {
					t.Errorf("rollouts/%s named %d times; want once", name, n)
				}
			}
			for _, name := range []string{"notes.txt", ".hidden.json", "run.json.tmp"} {
				if strings.Contains(log, name) {
					t.Errorf("rollouts/%s (not a rollout file's name, or a write in progress) named in the log", name)
				}
			}
			if code := d.signal(syscall.SIGTERM); code != 0 {
				t.Errorf("SIGTERM: exit %d", code)
			}
		})
	}
}

// waitFor waits at most limit for cond, then fails the test naming what it waited for.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
