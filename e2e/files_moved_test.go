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

// TestDirReplacedByLinkIsNotFollowed: the exchange directory replaced, while the daemon serves
// it (its database elsewhere), by a symbolic link to another exchange directory was followed:
// the daemon locked the other folder, counted its rollouts into this database, answered its
// request from this database and wrote its batch, status and snapshot folder there. A link in
// DIR's place is now never followed, as a linked folder inside DIR is not: nothing is read
// from it or written into it, and once DIR is a folder again the daemon goes on from where it
// was.
func TestDirReplacedByLinkIsNotFollowed(t *testing.T) {
	base := t.TempDir()
	dir, other := filepath.Join(base, "dir"), filepath.Join(base, "other")
	db := filepath.Join(base, "envsched.db")
	must(t, os.MkdirAll(filepath.Join(dir, "rollouts"), 0o755))
	var mine strings.Builder
	for i := range 10 {
		mine.WriteString(rolloutLine("mine-"+string(rune('a'+i)), i))
	}
	must(t, os.WriteFile(filepath.Join(dir, "rollouts", "r.jsonl"), []byte(mine.String()), 0o644))
	d := start(t, dir, opts{args: []string{"--db", db, "--rescan-interval", "200ms", "--status-interval", "500ms"}})
	d.waitReady()
	if got := barrier(t, d, "before"); got != 10 {
		t.Fatalf("before the swap: rollouts_seen %d; want 10", got)
	}
	// The status written after that answer is out: a swap during a write in progress (a
	// millisecond's window) is not what this test is about.
	waitUntil(t, "the status after the answer", func() bool {
		s, err := readStatus(dir)
		return err == nil && s.RequestsAnswered == 1
	})

	// Another exchange directory, with rollouts and a request of its own.
	must(t, os.MkdirAll(filepath.Join(other, "rollouts"), 0o755))
	ensureCatalog(t, other)
	var theirs strings.Builder
	for i := range 7 {
		theirs.WriteString(rolloutLine("theirs-"+string(rune('a'+i)), i))
	}
	must(t, os.WriteFile(filepath.Join(other, "rollouts", "o.jsonl"), []byte(theirs.String()), 0o644))
	writeRequest(t, other, "theirs", `{"size": 1}`)

	must(t, os.Rename(dir, dir+".away"))
	must(t, os.Symlink(other, dir))
	time.Sleep(1500 * time.Millisecond) // three heartbeats, seven rescans, and the watcher's polls
	if d.exited() {
		t.Fatalf("the daemon stopped: %d\n%s", d.state.ExitCode(), tail(d.stderr.String(), 3000))
	}
	for _, name := range []string{"batches", "status.json", "snapshots"} {
		if _, err := os.Lstat(filepath.Join(other, name)); err == nil {
			t.Errorf("%s written into the folder the link leads to\n%s", name, tail(d.stderr.String(), 3000))
		}
	}
	if n := strings.Count(d.stderr.String(), "exchange directory is a symbolic link"); n != 1 {
		t.Errorf("the link logged %d times; want once", n)
	}

	// DIR a folder again: the daemon goes on with its own files, none of the other folder's.
	must(t, os.Remove(dir))
	must(t, os.Rename(dir+".away", dir))
	if got := barrier(t, d, "after"); got != 10 {
		t.Errorf("after DIR came back: rollouts_seen %d; want 10 (the other folder's 7 counted?)", got)
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d\n%s", code, tail(d.stderr.String(), 3000))
	}
	if _, err := os.Stat(filepath.Join(other, "batches", "theirs.json")); err == nil {
		t.Errorf("the other folder's request was answered from this database")
	}
}

// TestRolloutFileMovedIntoCatalogAndBack: a rollout file moved into catalog/ by mistake and
// moved back is counted once: it resumes where it was. It was read again from its start once
// back, each of its rollouts counted twice (15 for 11 in hostile14a's run).
func TestRolloutFileMovedIntoCatalogAndBack(t *testing.T) {
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "rollouts"), 0o755))
	var b strings.Builder
	for i := range 5 {
		fmt.Fprintf(&b, `{"env":"env-0","task_id":"task-%d","reward":1}`+"\n", i)
	}
	home, away := filepath.Join(dir, "rollouts", "r.jsonl"), filepath.Join(dir, "catalog", "r.jsonl")
	must(t, os.WriteFile(home, []byte(b.String()), 0o644))
	d := start(t, dir, opts{})
	d.waitReady()
	if got := barrier(t, d, "s1"); got != 5 {
		t.Fatalf("rollouts_seen %d; want 5", got)
	}
	must(t, os.Rename(home, away))
	barrier(t, d, "s2")
	must(t, os.Rename(away, home))
	f, err := os.OpenFile(home, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(`{"env":"env-1","task_id":"task-9","reward":0}` + "\n")
	must(t, err)
	must(t, f.Close())
	if got := barrier(t, d, "s3"); got != 6 {
		t.Errorf("moved into catalog/ and back, one line appended: rollouts_seen %d; want 6", got)
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}

// TestCatalogueEmptiedThenRewrittenRetires: a catalogue file rewritten in place the way Python's
// open(path, "w") does it, with a request answered between the truncation and the new rows,
// retires the tasks the new rows leave out. They stayed in service (the emptied file held them
// back, and the rows read into it afterwards were taken for an append): a request for more tasks
// than the new catalogue lists was answered with tasks of the environments it dropped.
func TestCatalogueEmptiedThenRewrittenRetires(t *testing.T) {
	dir := t.TempDir()
	d := start(t, dir, opts{})
	d.waitReady()
	path := filepath.Join(dir, "catalog", "tasks.jsonl")
	must(t, os.Truncate(path, 0))
	barrier(t, d, "emptied") // served: the emptied file holds its tasks back
	var b strings.Builder
	for i := range 2 * 97 {
		fmt.Fprintf(&b, `{"env":"env-%d","task_id":"task-%d","text":"do thing %d"}`+"\n", i%2, i%97, i%13)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	must(t, err)
	_, err = f.WriteString(b.String())
	must(t, err)
	must(t, f.Close())
	writeRequest(t, dir, "too-many", `{"size": 195}`)
	waitUntil(t, "an answer to too-many", func() bool {
		_, err1 := os.Stat(filepath.Join(dir, "batches", "too-many.json"))
		_, err2 := os.Stat(filepath.Join(dir, "batches", "too-many.error.json"))
		return err1 == nil || err2 == nil
	})
	if data, err := os.ReadFile(filepath.Join(dir, "batches", "too-many.json")); err == nil {
		var a struct {
			Eligible int            `json:"eligible"`
			Envs     map[string]int `json:"envs"`
		}
		_ = json.Unmarshal(data, &a)
		t.Errorf("195 tasks asked of a catalogue of 194: answered, eligible %d, envs %v; want an error file "+
			"(env-2 and env-3 retired)", a.Eligible, a.Envs)
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}

// TestFileRewrittenUnderTheReadCountsOnce: a rollout file rewritten in place (O_TRUNC, then a
// longer new content written at once) while the daemon is in the middle of reading it: the
// read went on at its position in the new content, counting the new lines from there, and the
// next scan, seeing other first bytes, read the new content again from its start: each of
// those lines counted twice (hostile14a: 2,498,535 rollouts of a 1,500,000-line rewrite). The
// daemon is stopped (SIGSTOP) at its first progress line, mid-backlog, to make the rewrite land
// inside the read whatever the machine's speed.
func TestFileRewrittenUnderTheReadCountsOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rollouts", "big.jsonl")
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	const oldN, newN = 200000, 260000
	must(t, os.WriteFile(path, []byte(plainLines("old", 0, oldN)), 0o644))
	d := start(t, dir, opts{env: []string{"ENVSCHED_TEST_PROGRESS=1ns"}, stopAt: `"msg":"ingest progress"`})
	select {
	case <-d.stopped:
	case <-d.done:
		t.Fatalf("exited before a progress line\nstderr:\n%s", d.stderr.String())
	case <-time.After(90 * time.Second):
		t.Fatalf("no progress line\nstderr:\n%s", d.stderr.String())
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	must(t, err)
	_, err = f.WriteString(plainLines("new", 0, newN))
	must(t, err)
	must(t, f.Close())
	d.cmd.Process.Signal(syscall.SIGCONT)
	barrier(t, d, "after")
	time.Sleep(2500 * time.Millisecond) // the file settles; a later scan reads it again if it must
	barrier(t, d, "settled")
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Fatalf("SIGTERM: exit %d", code)
	}
	counts, check := taskCounts(t, dir)
	if check != nil {
		t.Errorf("database check: %v", check)
	}
	twice, missing, oldSeen := 0, 0, 0
	for i := range newN {
		switch n := counts[fmt.Sprintf("new-%d", i)]; {
		case n > 1:
			twice++
		case n == 0:
			missing++
		}
	}
	for i := range oldN {
		if n := counts[fmt.Sprintf("old-%d", i)]; n > 1 {
			t.Fatalf("old-%d counted %d times", i, n)
		} else if n == 1 {
			oldSeen++
		}
	}
	t.Logf("old lines counted before the rewrite: %d of %d", oldSeen, oldN)
	if oldSeen == oldN {
		t.Fatalf("the whole old file was read before the rewrite: the race was not exercised")
	}
	if twice > 0 || missing > 0 {
		t.Errorf("of the %d lines of the rewritten file, %d counted twice, %d never; want each once", newN, twice, missing)
	}
}
