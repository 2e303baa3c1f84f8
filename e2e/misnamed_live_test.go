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

// A catalogue put in a subfolder of catalog/ (catalog/v2/tasks.jsonl) is not read, as
// PROTOCOL.md says, and the daemon's log says so once per subfolder, whether it was there at start
// or came while it runs: it was ignored without a word, its tasks never known.
func TestNestedCatalogueIsLogged(t *testing.T) {
	dir := t.TempDir()
	row := `{"env":"nested","task_id":"n1","text":"a task in a subfolder"}` + "\n"
	must(t, os.MkdirAll(filepath.Join(dir, "catalog", "v2"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "catalog", "v2", "tasks.jsonl"), []byte(row), 0o644))
	d := start(t, dir, opts{args: []string{"--rescan-interval", "100ms"}})
	d.waitReady()
	must(t, os.MkdirAll(filepath.Join(dir, "catalog", "v3"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "catalog", "v3", "tasks.parquet"), []byte("PAR1"), 0o644))
	waitFor(t, 15*time.Second, "both subfolders named in the log", func() bool {
		log := d.stderr.String()
		return strings.Contains(log, `"path":"catalog/v2/"`) && strings.Contains(log, `"path":"catalog/v3/"`)
	})
	writeRequest(t, dir, "after", `{"size": 2}`)
	batch := waitBatch(t, d, "after")
	if strings.Contains(string(batch), "nested") {
		t.Errorf("a task of a subfolder's catalogue was chosen: %s", batch)
	}
	for _, folder := range []string{"catalog/v2/", "catalog/v3/"} {
		if n := strings.Count(d.stderr.String(), `"path":"`+folder+`"`); n != 1 {
			t.Errorf("%s named %d times; want once", folder, n)
		}
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}

// Rollouts written into DIR/rollout/ (a typo of rollouts/) are not read, and the daemon's log
// says so, naming the folder meant: they were ignored without a word.
func TestStrayExchangeFolderIsLogged(t *testing.T) {
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "rollout"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "rollout", "r.jsonl"), []byte(`{"env":"e0","task_id":"t1","reward":1}`+"\n"), 0o644))
	d := start(t, dir, opts{args: []string{"--rescan-interval", "100ms"}})
	d.waitReady()
	waitFor(t, 15*time.Second, "DIR/rollout named in the log", func() bool {
		return strings.Contains(d.stderr.String(), `"path":"`+filepath.Join(dir, "rollout")+`"`)
	})
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
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
