package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRolloutFileLinkedIntoRolloutsAfterReadAsCatalogue (hostile15's leftover): a rollout
// file written into catalog/ by mistake, read there as catalogue rows, then given a name in
// rollouts/ too (ln catalog/r.jsonl rollouts/r.jsonl, the catalog/ name kept) stayed a
// catalogue file for good: none of its rollouts ever counted, without a word (rollouts_seen 0
// for 4 lines). Its first complete line now decides, as for a file linked into both folders
// before envsched first saw it: a rollout makes it a rollout file under its rollouts/ name,
// read from its start, its catalogue rows no longer listed; logged at WARN.
func TestRolloutFileLinkedIntoRolloutsAfterReadAsCatalogue(t *testing.T) {
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "rollouts"), 0o755))
	d := start(t, dir, opts{})
	d.waitReady()
	var b strings.Builder
	for i := range 4 {
		fmt.Fprintf(&b, `{"env":"env-0","task_id":"task-%d","reward":1}`+"\n", i)
	}
	cat, roll := filepath.Join(dir, "catalog", "r.jsonl"), filepath.Join(dir, "rollouts", "r.jsonl")
	must(t, os.WriteFile(filepath.Join(dir, "catalog", ".r.jsonl"), []byte(b.String()), 0o644))
	must(t, os.Rename(filepath.Join(dir, "catalog", ".r.jsonl"), cat))
	if got := barrier(t, d, "as-catalogue"); got != 0 {
		t.Fatalf("in catalog/ only: rollouts_seen %d; want 0", got)
	}
	must(t, os.Link(cat, roll))
	if got := barrier(t, d, "linked"); got != 4 {
		t.Errorf("linked into rollouts/: rollouts_seen %d; want 4\n%s", got, tail(d.stderr.String(), 2000))
	}
	f, err := os.OpenFile(roll, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(`{"env":"env-1","task_id":"task-9","reward":0}` + "\n")
	must(t, err)
	must(t, f.Close())
	if got := barrier(t, d, "appended"); got != 5 {
		t.Errorf("one line appended: rollouts_seen %d; want 5", got)
	}
	if !strings.Contains(d.stderr.String(), "its first line is a rollout") {
		t.Errorf("the switch was not logged\n%s", tail(d.stderr.String(), 2000))
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Fatalf("SIGTERM: exit %d", code)
	}
	// A restart keeps it a rollout file: nothing counted again.
	d = start(t, dir, opts{})
	d.waitReady()
	if got := barrier(t, d, "restarted"); got != 5 {
		t.Errorf("after a restart: rollouts_seen %d; want 5", got)
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}

// TestCatalogueWithScoreLinkedIntoBothStaysCatalogue (hostile15's leftover): a catalogue whose
// rows carry a numeric `score` (a difficulty, a pass rate) beside their text, named in both
// catalog/ and rollouts/ (hard links) when envsched first saw it, was read as a rollout file
// (its first line parses as a rollout: env, task, score): every row counted as a rollout and
// its tasks never listed. A first line with a task's description (text, prompt, tools, ...)
// and a `score` but no `reward` and none of a rollout's own keys (group, step, request or
// rollout id) is now a catalogue row.
func TestCatalogueWithScoreLinkedIntoBothStaysCatalogue(t *testing.T) {
	dir := t.TempDir()
	ensureCatalog(t, dir)
	must(t, os.MkdirAll(filepath.Join(dir, "rollouts"), 0o755))
	var b strings.Builder
	for i := range 6 {
		fmt.Fprintf(&b, `{"env":"scored","task_id":"s-%d","text":"solve puzzle %d","score":0.%d}`+"\n", i, i, i+1)
	}
	cat := filepath.Join(dir, "catalog", "scored.jsonl")
	must(t, os.WriteFile(cat, []byte(b.String()), 0o644))
	must(t, os.Link(cat, filepath.Join(dir, "rollouts", "scored.jsonl")))
	d := start(t, dir, opts{})
	d.waitReady()
	if got := barrier(t, d, "first"); got != 0 {
		t.Errorf("rollouts_seen %d; want 0 (catalogue rows counted as rollouts)", got)
	}
	writeRequest(t, dir, "scored", `{"size": 6, "envs": ["scored"]}`)
	var ans struct {
		Tasks []struct {
			Env  string `json:"env"`
			Task string `json:"task_id"`
		} `json:"tasks"`
	}
	data := waitAnswer(t, d, "scored")
	if err := json.Unmarshal(data, &ans); err != nil || len(ans.Tasks) != 6 {
		t.Errorf("a request for the 6 tasks of the linked catalogue: %v\n%s", err, data)
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}

// TestStatsBesideTheDaemonOnASmallDisk (hostile15's leftover): a snapshot copy had to leave at
// least 32 MiB free, so on a disk smaller than that every `envsched stats` beside the daemon
// failed (a 16 MiB tmpfs, 15.7 MiB free, a database of 0.2 MiB: exit 1, "not enough free space
// ... 32.0 MiB must stay free"), however small the copy. The floor is now a quarter of the
// filesystem when that is less (and at least what the daemon's file may take at its next
// growth); a copy that would leave less is still refused. Root only (it mounts a tmpfs).
func TestStatsBesideTheDaemonOnASmallDisk(t *testing.T) {
	mnt := t.TempDir()
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "SKIPPED e2e TestStatsBesideTheDaemonOnASmallDisk: it mounts a tmpfs and runs only as root")
		t.Skip("it mounts a tmpfs and runs only as root")
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Fatalf("running as root but cannot mount a tmpfs (%v: %s): the case was not exercised", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
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

// TestInvalidIDNamedLikeAnErrorFileGetsItsOwn: request `a.error` (an invalid ID: no ID ends in
// ".error") written after request `a` was refused was taken for answered, since
// batches/a.error.json (a's error file) is the name an answer to `a.error` would have: it never
// got its own error file, nor a word in the log, and a trainer waiting on it read a's error.
// Only a valid ID's answer file counts as its answer now.
func TestInvalidIDNamedLikeAnErrorFileGetsItsOwn(t *testing.T) {
	dir := t.TempDir()
	d := start(t, dir, opts{})
	d.waitReady()
	writeRequest(t, dir, "a", `{"size": -1}`)
	waitUntil(t, "a's error file", func() bool {
		_, err := os.Stat(filepath.Join(dir, "batches", "a.error.json"))
		return err == nil
	})
	writeRequest(t, dir, "a.error", `{"size": 2}`)
	writeRequest(t, dir, "after", `{"size": 1}`)
	waitBatch(t, d, "after")
	writeRequest(t, dir, "after2", `{"size": 1}`) // the error files of after's pass are out by its answer
	waitBatch(t, d, "after2")
	if _, err := os.Stat(filepath.Join(dir, "batches", "a.error.error.json")); err != nil {
		t.Errorf("request a.error has no error file of its own: %v\n%s", err, tail(d.stderr.String(), 2000))
	}
	data, err := os.ReadFile(filepath.Join(dir, "batches", "a.error.json"))
	must(t, err)
	var e struct{ ID string }
	if json.Unmarshal(data, &e); e.ID != "a" {
		t.Errorf("a's error file changed: %s", data)
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}

// TestCatalogueWithoutFinalNewlineListsItsLastRow: a catalogue written as Python's
// "\n".join(rows) (no newline after the last row) never listed its last task: the row waited,
// as an unfinished line, for a newline that never came, and nothing was said. A last row that is
// a whole JSON object reading as a task is now read at once; a newline and more rows written
// after it later are read as usual, each task once.
func TestCatalogueWithoutFinalNewlineListsItsLastRow(t *testing.T) {
	dir := t.TempDir()
	rows := make([]string, 5)
	for i := range rows {
		rows[i] = fmt.Sprintf(`{"env":"joined","task_id":"j-%d","text":"task %d"}`, i, i)
	}
	must(t, os.MkdirAll(filepath.Join(dir, "catalog"), 0o755))
	path := filepath.Join(dir, "catalog", "joined.jsonl")
	must(t, os.WriteFile(path, []byte(strings.Join(rows, "\n")), 0o644))
	d := start(t, dir, opts{})
	d.waitReady()
	ask := func(id string, n int) {
		t.Helper()
		writeRequest(t, dir, id, fmt.Sprintf(`{"size": %d, "envs": ["joined"]}`, n))
		waitUntil(t, "an answer to "+id, func() bool {
			if e, err := os.ReadFile(filepath.Join(dir, "batches", id+".error.json")); err == nil {
				t.Fatalf("%d tasks of a catalogue of %d rows without a final newline: %s", n, n, e)
			}
			_, err := os.Stat(filepath.Join(dir, "batches", id+".json"))
			return err == nil
		})
	}
	ask("five", 5)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString("\n" + `{"env":"joined","task_id":"j-5","text":"task 5"}` + "\n")
	must(t, err)
	must(t, f.Close())
	ask("six", 6)
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
	f2 := readDB(t, dir)
	if f2.counters.Quarantined != 0 {
		t.Errorf("%d lines quarantined; want none", f2.counters.Quarantined)
	}
}

// TestUnterminatedRolloutFileIsNamed: a rollout file written as "\n".join(lines) (no newline
// after its last line) lost its last rollout with nothing said. It still waits for its newline
// (PROTOCOL.md section 4), but once those bytes are a whole rollout unchanged for 10 s the log
// names the file (here at once: the file is older than that when the daemon starts).
func TestUnterminatedRolloutFileIsNamed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rollouts", "joined.jsonl")
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, []byte(strings.TrimSuffix(rolloutLine("j0", 0)+rolloutLine("j1", 1), "\n")), 0o644))
	old := time.Now().Add(-time.Minute)
	must(t, os.Chtimes(path, old, old))
	d := start(t, dir, opts{})
	d.waitReady()
	if got := barrier(t, d, "b1"); got != 1 {
		t.Errorf("rollouts_seen %d; want 1 (the line without its newline waits)", got)
	}
	barrier(t, d, "b2")
	if n := strings.Count(d.stderr.String(), "no newline after it"); n != 1 {
		t.Errorf("the file named %d times; want once\n%s", n, tail(d.stderr.String(), 2000))
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString("\n")
	must(t, err)
	must(t, f.Close())
	if got := barrier(t, d, "b3"); got != 2 {
		t.Errorf("after the newline: rollouts_seen %d; want 2", got)
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}
