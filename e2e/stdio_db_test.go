package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The database as a command's standard output or error, or as the descriptor --out names,
// under another name (a hard link: `export 1<> LINK`, `stats 2<> LINK`, `export --out /dev/fd/3
// 3<> LINK`) is refused and left byte for byte as it was, whether the command opens it or reads
// the running daemon's copy. The export was written over the database's first pages
// ("invalid database" afterwards); --out was compared with the database by its path alone.
func TestDatabaseAsOutputIsRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x")
	ids := writeRollouts(t, dir, "a.jsonl", "a", 300)
	ensureCatalog(t, dir)
	if out, err := execCommand([]string{"ingest", "--dir", dir}).CombinedOutput(); err != nil {
		t.Fatalf("ingest: %v\n%s", err, out)
	}
	db := filepath.Join(dir, "envsched.db")
	link := filepath.Join(t.TempDir(), "other-name.db")
	must(t, os.Link(db, link))
	before, err := os.ReadFile(db)
	must(t, err)

	type place int
	const (
		stdout place = iota
		stderr
		fd3
	)
	cases := []struct {
		name  string
		args  []string
		where place
	}{
		{"export 1<>", []string{"export", "--dir", dir, "--what", "rollouts"}, stdout},
		{"stats 1<>", []string{"stats", "--dir", dir}, stdout},
		{"stats 2<>", []string{"stats", "--dir", dir}, stderr},
		{"export --out /dev/fd/3", []string{"export", "--dir", dir, "--what", "rollouts", "--out", "/dev/fd/3"}, fd3},
		{"report --out /dev/fd/3", []string{"report", "--dir", dir, "--out", "/dev/fd/3"}, fd3},
	}
	try := func(running bool) {
		for _, c := range cases {
			f, err := os.OpenFile(link, os.O_RDWR, 0) // as a shell's <> opens it: no truncation
			must(t, err)
			cmd := execCommand(c.args)
			var msg bytes.Buffer
			cmd.Stdout, cmd.Stderr = &msg, &msg
			switch c.where {
			case stdout:
				cmd.Stdout = f
			case stderr:
				cmd.Stderr = f
			case fd3:
				cmd.ExtraFiles = []*os.File{f}
			}
			err = cmd.Run()
			f.Close()
			if err == nil {
				t.Errorf("%s (daemon running %v): exit 0; want a refusal\n%s", c.name, running, msg.String())
			}
			if !running {
				if after, err := os.ReadFile(db); err != nil || !bytes.Equal(after, before) {
					t.Fatalf("%s: the database was written (%v)", c.name, err)
				}
			}
		}
	}
	try(false)
	d := start(t, dir, opts{})
	d.waitReady()
	try(true)
	writeRequest(t, dir, "after", `{"size": 2}`)
	waitBatch(t, d, "after")
	if code := d.signal(os.Interrupt); code != 0 {
		t.Errorf("SIGINT: exit %d\n%s", code, tail(d.stderr.String(), 2000))
	}
	checkExactlyOnce(t, dir, ids)
}

// The daemon's own log written into DIR/rollouts (`run --log-format json 2>>
// DIR/rollouts/envsched.jsonl`) is refused once, never read. Read as rollouts, every log line
// was quarantined ("missing env"), and each quarantine logged a line into the file, which was
// read and quarantined in turn: a line a second, the quarantined count growing for as long as
// the daemon ran.
func TestOwnLogInRolloutsIsNotRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x")
	ensureCatalog(t, dir)
	must(t, os.MkdirAll(filepath.Join(dir, "rollouts"), 0o755))
	logFile := filepath.Join(dir, "rollouts", "envsched.jsonl")
	args := []string{"run", "--dir", dir, "--poll-interval", "20ms", "--status-interval", "100ms",
		"--rescan-interval", "100ms", "--log-format", "json", "--log-level", "debug"}
	d := startCmd(t, dir, "", nil, execShell(`exec "$0" "$@" 2>>`+shellQuote(logFile), args))
	d.waitReady()
	ids := writeRollouts(t, dir, "a.jsonl", "a", 50)
	writeRequest(t, dir, "r1", `{"size": 2}`)
	waitBatch(t, d, "r1")
	time.Sleep(3 * time.Second) // thirty rescans
	st, err := readStatus(dir)
	must(t, err)
	if st.Quarantined > 1 {
		log, _ := os.ReadFile(logFile)
		t.Errorf("%d quarantined; want the log file alone, once\nlog:\n%s", st.Quarantined, tail(string(log), 3000))
	}
	if code := d.signal(os.Interrupt); code != 0 {
		t.Errorf("SIGINT: exit %d", code)
	}
	checkExactlyOnce(t, dir, ids)
}

// execShell is /bin/sh running script with args ($0 the binary, then args).
func execShell(script string, args []string) *exec.Cmd {
	return exec.Command("/bin/sh", append([]string{"-c", script, binary}, args...)...)
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// The daemon's log written into DIR/requests under a request's name (`2>>
// DIR/requests/log.json`) is never read nor answered. Refused as a bad request, its error was
// logged into it, which made it a request written again, refused and logged again: 140 lines a
// second for as long as the daemon ran.
func TestOwnLogInRequestsIsNotRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x")
	ensureCatalog(t, dir)
	must(t, os.MkdirAll(filepath.Join(dir, "requests"), 0o755))
	logFile := filepath.Join(dir, "requests", "log.json")
	args := []string{"run", "--dir", dir, "--poll-interval", "20ms", "--status-interval", "100ms",
		"--rescan-interval", "100ms"}
	d := startCmd(t, dir, "", nil, execShell(`exec "$0" "$@" 2>>`+shellQuote(logFile), args))
	d.waitReady()
	writeRequest(t, dir, "r1", `{"size": 2}`)
	waitBatch(t, d, "r1")
	time.Sleep(2 * time.Second)
	log, err := os.ReadFile(logFile)
	must(t, err)
	if n := bytes.Count(log, []byte("\n")); n > 10 {
		t.Errorf("%d log lines in 2 s; want a few\n%s", n, tail(string(log), 2000))
	}
	if _, err := os.Stat(filepath.Join(dir, "batches", "log.error.json")); err == nil {
		t.Error("the log was answered as a request")
	}
	if code := d.signal(os.Interrupt); code != 0 {
		t.Errorf("SIGINT: exit %d", code)
	}
}

// A reader of the daemon's standard error that stops reading (a terminal paused with Ctrl-S,
// `| less` left open, a stuck log shipper) does not stop it answering. Each log line was
// written by the goroutine that logged it: once the pipe's 64 KiB were full, the daemon
// answered no further request (461 answered, then none, at --log-level debug).
func TestLogReaderThatStopsReadingDoesNotStopTheDaemon(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x")
	ensureCatalog(t, dir)
	r, w, err := os.Pipe()
	must(t, err)
	defer r.Close() // open, never read
	cmd := execCommand([]string{"run", "--dir", dir, "--poll-interval", "20ms", "--status-interval", "100ms",
		"--log-format", "json", "--log-level", "debug"})
	cmd.Stderr = w
	must(t, cmd.Start())
	w.Close()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	waitUntil(t, "status.json", func() bool { _, err := readStatus(dir); return err == nil })
	for i := range 700 { // about 150 bytes of log each, at debug: the pipe is full by 460
		id := fmt.Sprintf("q%d", i)
		writeRequest(t, dir, id, `{"size": 2}`)
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(2 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(dir, "batches", id+".json")); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("request %d unanswered after 20 s, the log unread", i)
			}
		}
	}
	cmd.Process.Signal(os.Interrupt)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("SIGINT did not stop it with its log unread")
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("SIGINT: exit %d", code)
	}
}
