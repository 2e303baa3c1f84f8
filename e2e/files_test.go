package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/envsched/envsched/storage"
)

// plainLines returns rollout lines without rollout_id (so no dedupe can hide a line read twice)
// for tasks pfx-from .. pfx-(to-1). Their first 64 bytes are all the same, as a trainer's often are.
func plainLines(pfx string, from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, `{"env":"env-0","note":"%s","reward":1,"task_id":"%s-%d"}`+"\n",
			strings.Repeat("n", 60), pfx, i)
	}
	return b.String()
}

func plainTasks(pfx string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("%s-%d", pfx, i))
	}
	return out
}

// taskCounts reads how many rollouts the database holds per task (no daemon may run).
func taskCounts(t *testing.T, dir string) (map[string]int, error) {
	t.Helper()
	db, err := storage.Open(filepath.Join(dir, "envsched.db"), storage.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	counts := map[string]int{}
	err = db.View(func(r *storage.Reader) error {
		return r.Rollouts(func(sr *storage.StoredRollout) error { counts[sr.Task]++; return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	return counts, db.Check(dir)
}

// checkTasksOnce asserts that each task was stored exactly once and no other rollout was.
func checkTasksOnce(t *testing.T, dir string, tasks []string) {
	t.Helper()
	counts, check := taskCounts(t, dir)
	if check != nil {
		t.Errorf("database check: %v", check)
	}
	wrong := 0
	for _, task := range tasks {
		if counts[task] != 1 {
			if wrong < 5 {
				t.Errorf("task %s stored %d times; want once", task, counts[task])
			}
			wrong++
		}
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	if wrong > 0 || total != len(tasks) {
		t.Errorf("%d of %d lines not stored exactly once; %d rollouts stored", wrong, len(tasks), total)
	}
}

// barrier writes a request and waits for its answer: every line written before is then counted.
func barrier(t *testing.T, d *daemon, id string) int64 {
	t.Helper()
	writeRequest(t, d.dir, id, `{"size": 1}`)
	return rolloutsSeen(t, waitBatch(t, d, id))
}

// TestFileChangesExactlyOnce makes, against the real daemon in both watch modes, the file
// changes of #12 cases 1-3 and their siblings, each as fast as a script can, with lines that
// carry no rollout_id; every line must be stored exactly once.
func TestFileChangesExactlyOnce(t *testing.T) {
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

			// Case 1: truncated and rewritten at once, the first 64 bytes unchanged.
			must(t, os.WriteFile(roll("a.jsonl"), []byte(plainLines("a", 0, 100)), 0o644))
			want = append(want, plainTasks("a", 0, 100)...)
			check("written")
			must(t, os.WriteFile(roll("a.jsonl"), []byte(plainLines("a", 100, 300)), 0o644))
			want = append(want, plainTasks("a", 100, 300)...)
			check("truncated and rewritten")

			// Case 2: deleted and made again under the same name (ext4 gives it the freed inode).
			must(t, os.Remove(roll("a.jsonl")))
			must(t, os.WriteFile(roll("a.jsonl"), []byte(plainLines("c", 0, 250)), 0o644))
			want = append(want, plainTasks("c", 0, 250)...)
			check("deleted and made again")

			// Case 3: moved out of rollouts/ and back; renamed to a dot-name and back.
			must(t, os.MkdirAll(filepath.Join(dir, "aside"), 0o755))
			must(t, os.Rename(roll("a.jsonl"), filepath.Join(dir, "aside", "a.jsonl")))
			check("moved out")
			must(t, os.Rename(filepath.Join(dir, "aside", "a.jsonl"), roll("a.jsonl")))
			check("moved back")
			must(t, os.Rename(roll("a.jsonl"), roll(".a.jsonl")))
			check("renamed to a dot-name")
			f, err := os.OpenFile(roll(".a.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
			must(t, err)
			_, err = f.WriteString(plainLines("d", 0, 10))
			must(t, err)
			must(t, f.Close())
			want = append(want, plainTasks("d", 0, 10)...)
			must(t, os.Rename(roll(".a.jsonl"), roll("sub-back.jsonl")))
			check("appended while hidden, renamed back")

			// The same across a restart: moved out, daemon stopped, started, moved back.
			must(t, os.Rename(roll("sub-back.jsonl"), filepath.Join(dir, "aside", "b.jsonl")))
			check("moved out before a restart")
			if code := d.signal(syscall.SIGTERM); code != 0 {
				t.Fatalf("SIGTERM: exit %d", code)
			}
			d = start(t, dir, mode.o)
			d.waitReady()
			must(t, os.Rename(filepath.Join(dir, "aside", "b.jsonl"), roll("b.jsonl")))
			check("moved back after the restart")
			if code := d.signal(syscall.SIGTERM); code != 0 {
				t.Errorf("SIGTERM: exit %d", code)
			}
			checkTasksOnce(t, dir, want)
		})
	}
}

// TestNotRegularFilesAreRefused puts FIFOs where a rollout, a catalogue and a request file go
// and links to a file outside DIR in rollouts/ and catalog/, in both watch modes. The daemon
// must not hang (a plain open of a FIFO blocks until a writer comes), must never read through
// a link, must count each refusal as quarantined, answer the FIFO request with an error file,
// keep serving, stop on SIGTERM and start again with the FIFOs still there.
func TestNotRegularFilesAreRefused(t *testing.T) {
	for _, mode := range []struct {
		name string
		o    opts
	}{{"notify", opts{args: []string{"--rescan-interval", "300ms"}}},
		{"poll", opts{args: []string{"--poll", "--rescan-interval", "300ms"}}}} {
		t.Run(mode.name, func(t *testing.T) {
			dir := t.TempDir()
			outside := filepath.Join(t.TempDir(), "secret.jsonl")
			must(t, os.WriteFile(outside, []byte(plainLines("secret", 0, 5)), 0o644))
			for _, sub := range []string{"rollouts", "catalog", "requests", "batches"} {
				must(t, os.MkdirAll(filepath.Join(dir, sub), 0o755))
			}
			// One FIFO before the start (the start-up's backlog and request scan meet it).
			must(t, syscall.Mkfifo(filepath.Join(dir, "requests", "early.json"), 0o644))
			must(t, syscall.Mkfifo(filepath.Join(dir, "rollouts", "early.jsonl"), 0o644))
			d := start(t, dir, mode.o)
			d.waitReady()
			must(t, os.WriteFile(filepath.Join(dir, "rollouts", "ok.jsonl"), []byte(plainLines("ok", 0, 20)), 0o644))
			must(t, syscall.Mkfifo(filepath.Join(dir, "rollouts", "pipe.jsonl"), 0o644))
			must(t, syscall.Mkfifo(filepath.Join(dir, "catalog", "pipe.jsonl"), 0o644))
			must(t, syscall.Mkfifo(filepath.Join(dir, "catalog", "pipe.parquet"), 0o644))
			must(t, syscall.Mkfifo(filepath.Join(dir, "requests", "pipe.json"), 0o644))
			must(t, os.Symlink(outside, filepath.Join(dir, "rollouts", "out.jsonl")))
			must(t, os.Symlink(outside, filepath.Join(dir, "catalog", "out.jsonl")))
			must(t, os.Symlink(filepath.Join(dir, "rollouts", "ok.jsonl"), filepath.Join(dir, "rollouts", "in.jsonl")))
			// FIFOs where answers go: the daemon compares an answer with the file there before
			// it publishes, and must not block on that read.
			must(t, syscall.Mkfifo(filepath.Join(dir, "batches", "fb.json"), 0o644))
			must(t, syscall.Mkfifo(filepath.Join(dir, "batches", "fe.error.json"), 0o644))
			writeRequest(t, dir, "fb", `{"size": 2}`)
			writeRequest(t, dir, "fe", `{"size": -1}`)
			if got := barrier(t, d, "after"); got != 20 {
				t.Errorf("rollouts_seen %d; want the 20 lines of ok.jsonl (nothing through a link)", got)
			}
			// A FIFO under an answer's name is never opened. The daemon may replace it by the
			// answer (a rename never opens what it replaces) or leave it and name it in the log;
			// then, once the trainer removes it, the next sweep publishes the answer.
			for _, name := range []string{"fb.json", "fe.error.json"} {
				p := filepath.Join(dir, "batches", name)
				regular := func() bool {
					fi, err := os.Lstat(p) // never open the FIFO here: that would block the test
					return err == nil && fi.Mode().IsRegular()
				}
				waitUntil(t, "batches/"+name+" replaced, or named in the log", func() bool {
					return regular() || strings.Contains(d.stderr.String(), p)
				})
				if !regular() {
					must(t, os.Remove(p))
					waitUntil(t, "batches/"+name+" a regular file once the FIFO is gone", regular)
				}
				if data, err := os.ReadFile(p); err != nil || !strings.Contains(string(data), `"id"`) {
					t.Errorf("batches/%s: %v, %q; want the answer", name, err, data)
				}
			}
			for _, id := range []string{"early", "pipe"} {
				data := waitFile(t, d, filepath.Join(dir, "batches", id+".error.json"))
				if !strings.Contains(string(data), "not a regular file") {
					t.Errorf("%s.error.json: %s; want a message saying it is not a regular file", id, data)
				}
			}
			const refused = 7 // 2 rollout FIFOs, 2 catalogue FIFOs, 3 links
			waitStatus(t, d, "the refusals counted", func(s status) bool { return s.Quarantined == refused })
			if code := d.signal(syscall.SIGTERM); code != 0 {
				t.Fatalf("SIGTERM: exit %d", code)
			}
			d = start(t, dir, mode.o)
			d.waitReady()
			if got := barrier(t, d, "after-restart"); got != 20 {
				t.Errorf("after a restart: rollouts_seen %d; want 20", got)
			}
			if code := d.signal(syscall.SIGTERM); code != 0 {
				t.Errorf("SIGTERM after the restart: exit %d", code)
			}
			checkTasksOnce(t, dir, plainTasks("ok", 0, 20))
		})
	}
}

// TestStatusCommandOnFIFO: `envsched status` reads DIR/status.json; a FIFO there (no daemon
// running) must give an error, not a command that waits for ever.
func TestStatusCommandOnFIFO(t *testing.T) {
	dir := t.TempDir()
	must(t, syscall.Mkfifo(filepath.Join(dir, "status.json"), 0o644))
	cmd := execCommand([]string{"status", "--dir", dir})
	done := make(chan error, 1)
	var out []byte
	go func() {
		var err error
		out, err = cmd.CombinedOutput()
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(string(out), "not a regular file") {
			t.Errorf("envsched status on a FIFO: %v\n%s; want an error naming the FIFO", err, out)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("envsched status blocked on a FIFO status.json")
	}
}
