package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitStatus waits until status.json satisfies cond.
func waitStatus(t *testing.T, d *daemon, what string, cond func(status) bool) status {
	t.Helper()
	var st status
	waitUntil(t, what, func() bool {
		if d.exited() {
			t.Fatalf("envsched exited (%d) waiting for %s\nstderr:\n%s", d.state.ExitCode(), what,
				tail(d.stderr.String(), 4000))
		}
		var err error
		st, err = readStatus(d.dir)
		return err == nil && st.PID == d.cmd.Process.Pid && cond(st)
	})
	return st
}

// Polling alone, and fsnotify that loses events to (injected) overflows with no safety poll to
// fall back on: every file and request written while the daemon runs is seen, without any
// request forcing a full scan for the rollouts.
func TestNothingMissed(t *testing.T) {
	modes := []struct {
		name string
		o    opts
		want string
	}{
		{"poll", opts{args: []string{"--poll"}}, "poll"},
		{"notify-overflow", opts{args: []string{"--rescan-interval", "1h"},
			env: []string{"ENVSCHED_TEST_OVERFLOW_EVERY=7"}}, "notify"},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			d := start(t, dir, m.o)
			d.waitReady()
			var ids []string
			var reqs []string
			for i := range 40 {
				ids = append(ids, writeRollouts(t, dir, fmt.Sprintf("sub%d/f%d.jsonl", i%3, i%11),
					fmt.Sprint("x", i), 25)...)
				if i%4 == 0 {
					id := fmt.Sprintf("q%d", i)
					writeRequest(t, dir, id, `{}`)
					reqs = append(reqs, id)
				}
				time.Sleep(5 * time.Millisecond)
			}
			st := waitStatus(t, d, "all rollouts counted from hints alone", func(s status) bool {
				return s.Rollouts == int64(len(ids)) && s.RequestsAnswered == int64(len(reqs))
			})
			if st.WatchMode != m.want {
				t.Errorf("watch_mode %q; want %q", st.WatchMode, m.want)
			}
			for _, id := range reqs {
				waitBatch(t, d, id)
			}
			if m.name == "notify-overflow" && !strings.Contains(d.stderr.String(), `"msg":"rescan"`) {
				t.Errorf("no rescan logged after injected overflows")
			}
			if code := d.signal(syscall.SIGINT); code != 0 {
				t.Errorf("SIGINT: exit %d; want 0", code)
			}
			checkExactlyOnce(t, dir, ids)
		})
	}
}

// A burst of small rollout files written while the daemon is stopped (SIGSTOP), more files than
// inotify's queue holds events (/proc/sys/fs/inotify/max_queued_events), overflows the kernel's
// queue for real; the daemon rescans (its log says "overflow", not "overflow (injected)") and
// counts every file once.
func TestBurstOfSmallFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("tens of thousands of files")
	}
	raw, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	must(t, err)
	queue, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	must(t, err)
	if queue > 100000 {
		t.Fatalf("max_queued_events is %d: too many files to overflow it here; the case cannot be exercised", queue)
	}
	dir := t.TempDir()
	d := start(t, dir, opts{args: []string{"--rescan-interval", "1h"}})
	d.waitReady()
	if st, _ := readStatus(dir); st.WatchMode != "notify" {
		t.Fatalf("watch mode %q: the overflow needs inotify", st.WatchMode)
	}
	must(t, d.cmd.Process.Signal(syscall.SIGSTOP)) // nobody reads the queue while it fills
	n := queue + 2000                              // each file is at least one event (its creation)
	ids := make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("burst-%d", i)
		// in a folder watched since the start: files in a folder made while the daemon is
		// stopped would make no events at all
		p := filepath.Join(dir, "rollouts", fmt.Sprintf("burst-%05d.jsonl", i))
		must(t, os.WriteFile(p, []byte(rolloutLine(ids[i], i)), 0o644))
	}
	must(t, d.cmd.Process.Signal(syscall.SIGCONT))
	if st := waitStatusOr(t, d, func(s status) bool { return s.Rollouts == int64(n) }); st.Rollouts != int64(n) {
		t.Fatalf("timed out waiting for %d rollouts counted: status says %d\nstderr:\n%s", n, st.Rollouts, tail(d.stderr.String(), 6000))
	}
	waitUntil(t, "the daemon's log of the real overflow", func() bool {
		return strings.Contains(d.stderr.String(), `"msg":"event overflow; rescanning","reason":"overflow"`)
	})
	writeRequest(t, dir, "after-burst", `{}`)
	if got := rolloutsSeen(t, waitBatch(t, d, "after-burst")); got != int64(n) {
		t.Errorf("rollouts_seen %d; want %d", got, n)
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
	if checkExactlyOnce(t, dir, ids); t.Failed() {
		t.Logf("daemon log (file events):\n%s", fileEvents(d.stderr.String(), 40))
	}
}

// SIGTERM while the backlog is being ingested stops the daemon with exit 0, what it committed
// consistent; the next start goes on from there and counts everything once.
func TestGracefulStopDuringBacklog(t *testing.T) {
	dir := t.TempDir()
	var ids []string
	for i := range 10 {
		ids = append(ids, writeRollouts(t, dir, fmt.Sprintf("big/f%02d.jsonl", i), fmt.Sprint("b", i), 20000)...)
	}
	// The daemon logs the backlog's progress after every commit; at the first such line it is
	// stopped (SIGSTOP, from the goroutine that reads its log) and then sent SIGTERM: the stop
	// comes mid-backlog whatever the machine's speed (a fixed sleep let the whole backlog in).
	d := start(t, dir, opts{env: []string{"ENVSCHED_TEST_PROGRESS=1ns"}, stopAt: `"msg":"ingest progress"`})
	select {
	case <-d.stopped:
	case <-d.done:
		t.Fatalf("exited before a progress line\nstderr:\n%s", d.stderr.String())
	case <-time.After(90 * time.Second):
		t.Fatalf("no progress line\nstderr:\n%s", d.stderr.String())
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	d.cmd.Process.Signal(syscall.SIGCONT)
	if code := d.wait(); code != 0 {
		t.Fatalf("SIGTERM during backlog: exit %d; want 0\nstderr:\n%s", code, d.stderr.String())
	}
	f := readDB(t, dir)
	if f.check != nil {
		t.Errorf("database after the stop: %v", f.check)
	}
	t.Logf("committed before the stop: %d of %d", f.counters.Rollouts, len(ids))
	if f.counters.Rollouts == 0 || f.counters.Rollouts == int64(len(ids)) {
		t.Fatalf("%d of %d rollouts committed at the stop: the stop was not exercised mid-backlog",
			f.counters.Rollouts, len(ids))
	}

	d = start(t, dir, opts{})
	writeRequest(t, dir, "after", `{}`)
	if got := rolloutsSeen(t, waitBatch(t, d, "after")); got != int64(len(ids)) {
		t.Errorf("rollouts_seen %d after restart; want %d", got, len(ids))
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
	if checkExactlyOnce(t, dir, ids); t.Failed() {
		t.Logf("daemon log (file events):\n%s", fileEvents(d.stderr.String(), 40))
	}
}

// Bad requests of every kind and a torrent of bad rollout lines leave the daemon serving good
// requests, with the counts in status.json and one log line per file and reason.
func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	d := start(t, dir, opts{})
	d.waitReady()
	bad := []string{
		`not json at all`,
		`["an", "array"]`,
		`{"env":"e","task_id":"t"}`,
		`{"env":"e","task_id":"t","reward":"high"}`,
		`{"task_id":"t","reward":1}`,
		`{"env":"e","reward":1}`,
		`{"env":"e","task_id":"t","reward":1e999}`,
	}
	var b strings.Builder
	var ids []string
	nbad := 0
	for i := range 3000 {
		if i%3 == 0 {
			id := fmt.Sprint("good-", i)
			ids = append(ids, id)
			b.WriteString(rolloutLine(id, i))
		} else {
			b.WriteString(bad[i%len(bad)] + "\n")
			nbad++
		}
	}
	must(t, os.WriteFile(filepath.Join(dir, "rollouts", "torrent.jsonl"), []byte(b.String()), 0o644))
	requests := map[string]string{
		"badjson":       `{"size": `,
		"array":         `[1]`,
		"unknown-field": `{"sise": 3}`,
		"too-big":       `{"size": 100001}`,
		"neg":           `{"size": -1}`,
		"huge":          `{"size": 1` + strings.Repeat(" ", 2<<20) + `}`,
		"-bad-id":       `{}`,
		"bad id":        `{}`,
	}
	for id, body := range requests {
		writeRequest(t, dir, id, body)
	}
	writeRequest(t, dir, "good", `{"size": 2}`)
	if got := rolloutsSeen(t, waitBatch(t, d, "good")); got != int64(len(ids)) {
		t.Errorf("rollouts_seen %d; want %d good lines", got, len(ids))
	}
	for id := range requests {
		var e struct{ ID, Error string }
		data := waitFile(t, d, filepath.Join(dir, "batches", id+".error.json"))
		if err := json.Unmarshal(data, &e); err != nil || e.ID != id || e.Error == "" {
			t.Errorf("%s: error file %s (%v)", id, data, err)
		}
	}
	// status.json is written after each round of answers and on a heartbeat: one written after
	// the torrent was read but before the answers may already have the quarantine count
	st := waitStatus(t, d, "counts", func(s status) bool {
		return s.Quarantined == int64(nbad) && s.RequestsAnswered == 1
	})
	if st.Rollouts != int64(len(ids)) || st.RequestsAnswered != 1 {
		t.Errorf("status %+v; want %d rollouts, 1 request answered", st, len(ids))
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
	if n := countLogLines(t, d.stderr.String(), "quarantined lines"); n == 0 || n > 20 {
		t.Errorf("%d log lines for quarantined lines; want a few (per file and reason), not one per line", n)
	}
	if checkExactlyOnce(t, dir, ids); t.Failed() {
		t.Logf("daemon log (file events):\n%s", fileEvents(d.stderr.String(), 40))
	}
}

func waitFile(t *testing.T, d *daemon, path string) []byte {
	t.Helper()
	var data []byte
	waitUntil(t, path, func() bool {
		var err error
		data, err = os.ReadFile(path)
		return err == nil
	})
	return data
}

func countLogLines(t *testing.T, log, msg string) int {
	t.Helper()
	n := 0
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["msg"] == msg {
			n++
		}
	}
	return n
}

// A second daemon on the same database exits 3 with a message naming the database; SIGINT
// stops the first with 0.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	first := start(t, dir, opts{})
	first.waitReady()
	second := start(t, dir, opts{})
	if code := second.wait(); code != 3 {
		t.Errorf("second daemon: exit %d; want 3", code)
	}
	if !strings.Contains(second.stderr.String(), filepath.Join(dir, "envsched.db")) {
		t.Errorf("second daemon's message does not name the database: %s", second.stderr.String())
	}
	bad := start(t, dir, opts{args: []string{"--batch-size", "0x"}})
	if code := bad.wait(); code != 2 {
		t.Errorf("bad flag: exit %d; want 2", code)
	}
	// A stray argument: the flags after it were dropped unread (the daemon ran with the default
	// batch size instead of the 0 refused here), now it is a bad command line.
	stray := startCmd(t, dir, "", nil, execCommand([]string{"run", "--dir", t.TempDir(), "stray", "--batch-size", "0"}))
	if code := stray.wait(); code != 2 || !strings.Contains(stray.stderr.String(), "stray") {
		t.Errorf("a stray argument before flags: exit %d; want 2 naming it\n%s", code, stray.stderr.String())
	}
	if code := first.signal(syscall.SIGINT); code != 0 {
		t.Errorf("SIGINT: exit %d; want 0", code)
	}
}

// A request written while the last line of a rollout file is still being written sees every
// complete line and not the unfinished one, which counts once it is complete.
func TestRequestBeforeLastLineIsComplete(t *testing.T) {
	dir := t.TempDir()
	ids := writeRollouts(t, dir, "w/a.jsonl", "done", 400)
	d := start(t, dir, opts{})
	d.waitReady()
	last := rolloutLine("late", 7)
	path := filepath.Join(dir, "rollouts", "w", "a.jsonl")
	appendBytes(t, path, last[:25])
	writeRequest(t, dir, "early", `{}`)
	if got := rolloutsSeen(t, waitBatch(t, d, "early")); got != int64(len(ids)) {
		t.Errorf("rollouts_seen %d with the last line unfinished; want %d", got, len(ids))
	}
	appendBytes(t, path, last[25:])
	writeRequest(t, dir, "later", `{}`)
	if got := rolloutsSeen(t, waitBatch(t, d, "later")); got != int64(len(ids)+1) {
		t.Errorf("rollouts_seen %d once the line was complete; want %d", got, len(ids)+1)
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
	checkExactlyOnce(t, dir, append(ids, "late"))
}

// fileEvents returns up to n of the daemon's log lines about tracked files (renamed, gone,
// replaced, rewritten).
func fileEvents(log string, n int) string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `"msg":"file `) && len(out) < n {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

func appendBytes(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	defer f.Close()
	_, err = f.WriteString(data)
	must(t, err)
}

// Files renamed inside DIR/rollouts again and again while the daemon scans (every request is a
// full pass) keep their place: no line is read twice or lost, with no crash involved.
func TestRenamesDuringScans(t *testing.T) {
	dir := t.TempDir()
	d := start(t, dir, opts{})
	d.waitReady()
	path := filepath.Join(dir, "rollouts", "hop-0.jsonl")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	must(t, err)
	var ids []string
	for i := range 3000 {
		id := fmt.Sprint("hop-", i)
		ids = append(ids, id)
		_, err := f.WriteString(rolloutLine(id, i))
		must(t, err)
		if i%10 == 9 { // a new name, in the same folder or the subfolder
			next := filepath.Join(dir, "rollouts", fmt.Sprintf("hop-%d.jsonl", i))
			if i%20 == 19 {
				next = filepath.Join(dir, "rollouts", "sub", fmt.Sprintf("hop-%d.jsonl", i))
				must(t, os.MkdirAll(filepath.Dir(next), 0o755))
			}
			must(t, os.Rename(path, next))
			path = next
			time.Sleep(time.Millisecond)
		}
		if i%100 == 99 {
			writeRequest(t, dir, fmt.Sprint("hop-req-", i), `{"size": 2}`)
		}
	}
	must(t, f.Close())
	writeRequest(t, dir, "hop-final", `{}`)
	if got := rolloutsSeen(t, waitBatch(t, d, "hop-final")); got != int64(len(ids)) {
		t.Errorf("rollouts_seen %d; want %d", got, len(ids))
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
	if checkExactlyOnce(t, dir, ids); t.Failed() {
		t.Logf("daemon log (file events):\n%s", fileEvents(d.stderr.String(), 40))
	}
}

// waitStatusOr waits like waitStatus but returns the last status read when the time is up, so
// that the caller can say what the daemon had counted.
func waitStatusOr(t *testing.T, d *daemon, cond func(status) bool) status {
	t.Helper()
	var st status
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if d.exited() {
			t.Fatalf("envsched exited (%d)\nstderr:\n%s", d.state.ExitCode(), tail(d.stderr.String(), 4000))
		}
		if s, err := readStatus(d.dir); err == nil && s.PID == d.cmd.Process.Pid {
			if st = s; cond(st) {
				return st
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return st
}
