package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitAnswer is waitBatch that fails at once when the request gets an error file instead.
func waitAnswer(t *testing.T, d *daemon, id string) []byte {
	t.Helper()
	var data []byte
	waitUntil(t, "an answer to "+id, func() bool {
		if e, err := os.ReadFile(filepath.Join(d.dir, "batches", id+".error.json")); err == nil {
			t.Fatalf("%s got an error file: %s", id, e)
		}
		var err error
		data, err = os.ReadFile(filepath.Join(d.dir, "batches", id+".json"))
		return err == nil
	})
	return data
}

// answerStep is the step of an answer file.
func answerStep(t *testing.T, data []byte) int64 {
	t.Helper()
	var a struct{ Step *int64 }
	if err := json.Unmarshal(data, &a); err != nil || a.Step == nil {
		t.Fatalf("answer %s: %v; want a step", data, err)
	}
	return *a.Step
}

// TestStepAtTheBound: one request at the largest step used to make every later request without
// a step fail (the default step, previous + 1, was out of range) until one named a step. Now
// the default holds at the bound, and a request beyond it is refused without changing anything.
func TestStepAtTheBound(t *testing.T) {
	dir := t.TempDir()
	d := start(t, dir, opts{})
	d.waitReady()
	writeRequest(t, dir, "s1", `{"size": 2}`)
	if got := answerStep(t, waitAnswer(t, d, "s1")); got != 1 {
		t.Errorf("first request without a step: step %d; want 1", got)
	}
	writeRequest(t, dir, "beyond", `{"size": 2, "step": 1000000001}`)
	waitFile(t, d, filepath.Join(dir, "batches", "beyond.error.json"))
	writeRequest(t, dir, "s2", `{"size": 2}`)
	if got := answerStep(t, waitAnswer(t, d, "s2")); got != 2 {
		t.Errorf("after a refused step beyond the bound: step %d; want 2 (nothing changed)", got)
	}
	writeRequest(t, dir, "top", `{"size": 2, "step": 1000000000}`)
	if got := answerStep(t, waitAnswer(t, d, "top")); got != 1000000000 {
		t.Errorf("step at the bound: %d", got)
	}
	for i := range 3 {
		id := fmt.Sprint("after-top-", i)
		writeRequest(t, dir, id, `{"size": 2}`)
		if got := answerStep(t, waitAnswer(t, d, id)); got != 1000000000 {
			t.Errorf("%s: step %d; want 1000000000 (the default holds at the bound)", id, got)
		}
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}

// TestNamesAreBytes: names are compared as bytes, never normalised, so that every answer hands
// back exactly the bytes the trainer wrote (a trainer looks its tasks up by them). "café" in
// NFC (é one code point) and in NFD (e + combining accent) are two environments.
func TestNamesAreBytes(t *testing.T) {
	dir := t.TempDir()
	nfc, nfd := "caf\u00e9", "cafe\u0301"
	var cat strings.Builder
	for i := range 6 {
		fmt.Fprintf(&cat, `{"env":%q,"task_id":"t%d","text":"task %d"}`+"\n", nfc, i, i)
		fmt.Fprintf(&cat, `{"env":%q,"task_id":"t%d","text":"task %d"}`+"\n", nfd, i, i)
	}
	must(t, os.MkdirAll(filepath.Join(dir, "catalog"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "catalog", "tasks.jsonl"), []byte(cat.String()), 0o644))
	d := start(t, dir, opts{})
	d.waitReady()
	for _, env := range []string{nfc, nfd} {
		id := fmt.Sprintf("only-%x", env)
		writeRequest(t, dir, id, fmt.Sprintf(`{"size": 6, "envs": [%q]}`, env))
		var a struct {
			Envs  map[string]int
			Tasks []struct{ Env string }
		}
		must(t, json.Unmarshal(waitAnswer(t, d, id), &a))
		if len(a.Envs) != 1 || a.Envs[env] != 6 {
			t.Errorf("envs [%+q]: answer's envs %v; want 6 tasks of exactly that name", env, a.Envs)
		}
		for _, task := range a.Tasks {
			if task.Env != env {
				t.Errorf("envs [%+q]: a task of %+q", env, task.Env)
			}
		}
	}
	if st := waitStatus(t, d, "two environments", func(s status) bool { return s.Tasks == 12 }); st.Envs != 2 {
		t.Errorf("status: %d environments; want 2 (NFC and NFD are two names)", st.Envs)
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}

// TestGoodRequestFirst: a good request noticed together with a flood of bad ones is answered
// before any of their error files is written (each used to be written, and fsync'd twice, in
// directory order before the good request's turn: 20,000 bad requests held a good one ~79 s).
// Every request file is there before the start, so one pass meets them all.
func TestGoodRequestFirst(t *testing.T) {
	dir := t.TempDir()
	const bad = 300
	for i := range bad {
		writeRequest(t, dir, fmt.Sprint("bad-", i), `{"size": -1}`)
	}
	writeRequest(t, dir, "good", `{"size": 2}`)
	d := start(t, dir, opts{})
	waitAnswer(t, d, "good")
	answered := modTime(t, filepath.Join(dir, "batches", "good.json"))
	for i := range bad {
		p := filepath.Join(dir, "batches", fmt.Sprint("bad-", i, ".error.json"))
		data := waitFile(t, d, p)
		if !strings.Contains(string(data), "size is -1") {
			t.Errorf("%s: %s", p, data)
		}
		if m := modTime(t, p); m.Before(answered) {
			t.Fatalf("bad-%d's error file was written %v before the good request's answer", i, answered.Sub(m))
		}
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
	if left := leftovers(t, dir); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

func modTime(t *testing.T, path string) time.Time {
	t.Helper()
	fi, err := os.Stat(path)
	must(t, err)
	return fi.ModTime()
}

// nobody is the user an unprivileged daemon runs as when the tests run as root.
const nobody = 65534

// runAsNobody prepares dir for a daemon started with opts.unprivileged: as root, the binary's
// folder and dir's parents become traversable and dir is given to nobody. Not as root, nothing
// is needed (the daemon runs as the test's user, for whom permissions bite).
func runAsNobody(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	must(t, os.Chmod(filepath.Dir(binary), 0o755))
	for p := filepath.Dir(dir); p != os.TempDir() && p != "/" && p != "."; p = filepath.Dir(p) {
		must(t, os.Chmod(p, 0o755))
	}
	must(t, filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, nobody, nobody)
	}))
}

// TestRefusedFilesCountedOnce: a FIFO that stays in rollouts/ and a rollout file the daemon may
// not read are each quarantined once, not once more at every restart (the count grew by one per
// file and restart); the unreadable file is read, exactly once, as soon as it can be.
func TestRefusedFilesCountedOnce(t *testing.T) {
	dir := t.TempDir()
	ensureCatalog(t, dir)
	must(t, os.MkdirAll(filepath.Join(dir, "rollouts"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "rollouts", "ok.jsonl"), []byte(plainLines("ok", 0, 10)), 0o644))
	must(t, syscall.Mkfifo(filepath.Join(dir, "rollouts", "pipe.jsonl"), 0o644))
	runAsNobody(t, dir)
	locked := filepath.Join(dir, "rollouts", "locked.jsonl")
	must(t, os.WriteFile(locked, []byte(plainLines("locked", 0, 5)), 0o644))
	if os.Geteuid() == 0 {
		must(t, os.Lchown(locked, 0, 0)) // root's, and only root may read it
	}
	must(t, os.Chmod(locked, 0o200))
	o := opts{unprivileged: true}
	for run := range 3 {
		d := start(t, dir, o)
		d.waitReady()
		if got := barrier(t, d, fmt.Sprint("run-", run)); got != 10 {
			t.Errorf("start %d: rollouts_seen %d; want the 10 lines of ok.jsonl", run, got)
		}
		if st := waitStatus(t, d, "status after the barrier", func(s status) bool { return s.RequestsAnswered == int64(run+1) }); st.Quarantined != 2 {
			t.Errorf("start %d: quarantined %d; want 2 (the FIFO and the unreadable file, once each)", run, st.Quarantined)
		}
		if run == 0 && !strings.Contains(d.stderr.String(), "permission denied") {
			t.Errorf("no log line says the file cannot be read:\n%s", tail(d.stderr.String(), 3000))
		}
		if run < 2 {
			if code := d.signal(syscall.SIGTERM); code != 0 {
				t.Fatalf("SIGTERM: exit %d", code)
			}
			continue
		}
		must(t, os.Chmod(locked, 0o644))
		if got := barrier(t, d, "readable"); got != 15 {
			t.Errorf("once the file can be read: rollouts_seen %d; want 15", got)
		}
		if code := d.signal(syscall.SIGTERM); code != 0 {
			t.Fatalf("SIGTERM: exit %d", code)
		}
	}
	checkTasksOnce(t, dir, append(plainTasks("ok", 0, 10), plainTasks("locked", 0, 5)...))
}
