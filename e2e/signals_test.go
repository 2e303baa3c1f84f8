package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStopSignals: SIGINT, SIGTERM and SIGHUP (the terminal closed) each stop the daemon after
// the work in hand, with exit 0, the "stopped" log line, no temporary file left and every
// rollout stored once; SIGHUP killed it outright before (exit -1, no "stopped"). A daemon
// started with SIGHUP ignored (nohup) keeps ignoring it and goes on serving.
func TestStopSignals(t *testing.T) {
	// A test binary started with SIGHUP ignored (under nohup, as CI may run it) would pass that
	// on to every daemon it starts, which must then keep ignoring it. Handling SIGHUP here makes
	// the children start with the default disposition, as from a terminal.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			ids := writeRollouts(t, dir, "a.jsonl", "s", 50)
			d := start(t, dir, opts{})
			d.waitReady()
			writeRequest(t, dir, "r1", `{"size": 2}`)
			waitBatch(t, d, "r1")
			if code := d.signal(sig); code != 0 {
				t.Fatalf("%v: exit %d; want 0\nstderr:\n%s", sig, code, tail(d.stderr.String(), 3000))
			}
			if !strings.Contains(d.stderr.String(), `"msg":"stopped"`) {
				t.Errorf("%v: no \"stopped\" log line: the daemon did not stop by itself", sig)
			}
			if l := leftovers(t, dir); len(l) > 0 {
				t.Errorf("%v: unfinished writes left: %v", sig, l)
			}
			checkExactlyOnce(t, dir, ids)
		})
	}
	t.Run("SIGHUP ignored under nohup", func(t *testing.T) {
		dir := t.TempDir()
		ids := writeRollouts(t, dir, "a.jsonl", "n", 50)
		d := start(t, dir, opts{ignoreHangup: true})
		d.waitReady()
		d.cmd.Process.Signal(syscall.SIGHUP)
		time.Sleep(200 * time.Millisecond) // a stop, if any, would have begun
		more := writeRollouts(t, dir, "b.jsonl", "m", 5)
		writeRequest(t, dir, "r2", `{"size": 2}`)
		if got := rolloutsSeen(t, waitBatch(t, d, "r2")); got != int64(len(ids)+len(more)) {
			t.Errorf("rollouts_seen %d after SIGHUP; want %d", got, len(ids)+len(more))
		}
		if d.exited() {
			t.Fatalf("exited on an ignored SIGHUP\nstderr:\n%s", tail(d.stderr.String(), 3000))
		}
		if code := d.signal(syscall.SIGTERM); code != 0 {
			t.Errorf("SIGTERM: exit %d", code)
		}
		checkExactlyOnce(t, dir, append(ids, more...))
	})
}

// TestOneDaemonPerDir: a second `envsched run` on a DIR another one serves exits 3 naming the
// folder, even with a database of its own (both answered every request before, overwriting each
// other's batch files with other answers); the first goes on answering alone.
func TestOneDaemonPerDir(t *testing.T) {
	dir := t.TempDir()
	first := start(t, dir, opts{})
	first.waitReady()
	second := start(t, dir, opts{args: []string{"--db", filepath.Join(t.TempDir(), "other.db")}})
	if code := second.wait(); code != 3 {
		t.Fatalf("second daemon with its own --db: exit %d; want 3\nstderr:\n%s", code, tail(second.stderr.String(), 2000))
	}
	if msg := second.stderr.String(); !strings.Contains(msg, "is served by another envsched process") || !strings.Contains(msg, dir) {
		t.Errorf("second daemon's message does not say DIR is served: %s", msg)
	}
	if _, err := os.Stat("/proc/locks"); err == nil {
		if msg, pid := second.stderr.String(), fmt.Sprintf("(pid %d, envsched; ", first.cmd.Process.Pid); !strings.Contains(msg, pid) {
			t.Errorf("second daemon's message does not name the first's pid %q: %s", pid, msg)
		}
	}
	writeRequest(t, dir, "r1", `{"size": 2}`)
	waitBatch(t, first, "r1")
	if code := first.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}

// TestUnwritableFoldersDoNotStopTheDaemon: batches/ or DIR itself made unwritable while the
// daemon serves (chmod by the trainer, or a filesystem remounted read-only) is the trainer's
// doing, like a folder removed: the daemon logs it once, goes on serving, and publishes the
// answers (and status.json) once it can write again. It stopped with exit 1.
func TestUnwritableFoldersDoNotStopTheDaemon(t *testing.T) {
	for _, tc := range []struct {
		folder string
		mode   os.FileMode
		says   string // the log line that says so
	}{{"batches", 0o555, "cannot publish"}, {".", 0o555, "cannot publish"}, {".", 0o000, "cannot list requests"},
		{"requests", 0o000, "cannot list requests"}} {
		folder := tc.folder
		t.Run(fmt.Sprintf("%s %o", folder, tc.mode), func(t *testing.T) {
			dir := t.TempDir()
			ensureCatalog(t, dir)
			for _, sub := range []string{"batches", "requests", "rollouts"} {
				must(t, os.MkdirAll(filepath.Join(dir, sub), 0o755))
			}
			runAsNobody(t, dir)
			d := start(t, dir, opts{unprivileged: true, args: []string{"--rescan-interval", "100ms"}})
			d.waitReady()
			locked := filepath.Join(dir, folder)
			must(t, os.Chmod(locked, tc.mode))
			writeRequest(t, dir, "r1", `{"size": 2}`)
			waitUntil(t, "the log line saying "+tc.says, func() bool {
				if d.exited() {
					t.Fatalf("daemon exited with %d\nstderr:\n%s", d.state.ExitCode(), tail(d.stderr.String(), 1500))
				}
				return strings.Contains(d.stderr.String(), tc.says)
			})
			time.Sleep(500 * time.Millisecond) // sweeps and heartbeats with the folder locked
			if n := strings.Count(d.stderr.String(), tc.says); n > 2 {
				t.Errorf("%d log lines saying %s; want one per file\n%s", n, tc.says, tail(d.stderr.String(), 4000))
			}
			must(t, os.Chmod(locked, 0o755))
			waitBatch(t, d, "r1")
			if code := d.signal(syscall.SIGTERM); code != 0 {
				t.Errorf("SIGTERM: exit %d", code)
			}
		})
	}
}

// TestLogReaderGoneDoesNotStopTheDaemon: the daemon's log read through a pipe whose reader goes
// away (envsched run 2>&1 | head -1, a log shipper restarted) no longer ends it: Go's runtime
// killed it with SIGPIPE at its next log line. It answers the request written afterwards and
// stops on SIGTERM with exit 0.
func TestLogReaderGoneDoesNotStopTheDaemon(t *testing.T) {
	dir := t.TempDir()
	ensureCatalog(t, dir)
	r, w, err := os.Pipe()
	must(t, err)
	cmd := execCommand([]string{"run", "--dir", dir, "--status-interval", "200ms"})
	cmd.Stderr = w
	must(t, cmd.Start())
	w.Close()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("no first log line: %v", err)
	}
	r.Close() // the reader goes away after one line
	writeRequest(t, dir, "after", `{"size": 2}`)
	path := filepath.Join(dir, "batches", "after.json")
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			break
		}
		select {
		case <-done:
			t.Fatalf("the daemon ended once its log reader was gone (%v); its first line: %s", cmd.ProcessState, line)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no batch")
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	<-done
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("SIGTERM: exit %d (%v)", code, cmd.ProcessState)
	}
}
