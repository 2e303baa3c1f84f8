package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestRolloutFileRewrittenByRenameKeepsItsPlace checks the original contract's exactly-once
// clause (../shared/PROTOCOL.md, "Rollout records"): "A file that shrinks or whose first bytes
// change is a new file and is read from its start", so a rollout file that neither shrank nor
// changed its first bytes is the same file, grown. A trainer that follows the contract's advice
// for whole files (write .NAME.tmp, then rename) also for its rollout file, rewriting it whole
// at each step with the old lines first and the new ones after, must have each line counted
// once. The daemon took the file renamed over the old one (a new inode) for a new file and
// counted every line it repeats a second time. A file renamed over the old one with other
// content (the same first 64 bytes, other lines) is still new content, read from its start.
func TestRolloutFileRewrittenByRenameKeepsItsPlace(t *testing.T) {
	for _, mode := range []struct {
		name string
		o    opts
	}{{"notify", opts{}}, {"poll", opts{args: []string{"--poll"}}}} {
		t.Run(mode.name, func(t *testing.T) {
			dir := t.TempDir()
			roll := func(rel string) string { return filepath.Join(dir, "rollouts", rel) }
			d := start(t, dir, mode.o)
			d.waitReady()
			var want []string
			step := 0
			check := func(what string) {
				t.Helper()
				step++
				if got := barrier(t, d, fmt.Sprint("b", step)); got != int64(len(want)) {
					t.Errorf("%s: rollouts_seen %d; want %d", what, got, len(want))
				}
			}
			whole := func(name, body string) {
				t.Helper()
				tmp := roll("." + name + ".tmp")
				must(t, os.WriteFile(tmp, []byte(body), 0o644))
				must(t, os.Rename(tmp, roll(name)))
			}

			whole("a.jsonl", plainLines("a", 0, 100))
			want = append(want, plainTasks("a", 0, 100)...)
			check("written whole")
			whole("a.jsonl", plainLines("a", 0, 250))
			want = append(want, plainTasks("a", 100, 250)...)
			check("rewritten whole by rename, the old lines first")
			whole("a.jsonl", plainLines("a", 0, 400))
			want = append(want, plainTasks("a", 250, 400)...)
			check("rewritten whole by rename again")

			// Other content renamed over it: new lines, read from the start.
			whole("a.jsonl", plainLines("e", 0, 50))
			want = append(want, plainTasks("e", 0, 50)...)
			check("other content renamed over it")

			// Across a restart: rewritten whole while the daemon is stopped.
			if code := d.signal(syscall.SIGTERM); code != 0 {
				t.Fatalf("SIGTERM: exit %d", code)
			}
			whole("a.jsonl", plainLines("e", 0, 120))
			want = append(want, plainTasks("e", 50, 120)...)
			d = start(t, dir, mode.o)
			d.waitReady()
			check("rewritten whole by rename while stopped")
			if code := d.signal(syscall.SIGTERM); code != 0 {
				t.Errorf("SIGTERM: exit %d", code)
			}
			checkTasksOnce(t, dir, want)
		})
	}
}
