package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/envsched/envsched/storage"
)

// binary is the envsched command built once for the whole package by TestMain.
var binary string

func TestMain(m *testing.M) {
	tmp, err := os.MkdirTemp("", "envsched-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(tmp, "envsched")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(tmp)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(tmp)
	os.Exit(code)
}

// execCommand is the envsched binary with args.
func execCommand(args []string) *exec.Cmd { return exec.Command(binary, args...) }

// daemon is one `envsched run` process.
type daemon struct {
	t       *testing.T
	dir     string
	cmd     *exec.Cmd
	stderr  *lockedBuffer
	done    chan struct{}
	stopped chan struct{} // closed when opts.stopAt SIGSTOPped the process
	state   *os.ProcessState
}

// stopper passes the log on and SIGSTOPs the process at the first write with its text.
type stopper struct {
	w    *lockedBuffer
	text string
	d    *daemon
	once sync.Once
}

func (s *stopper) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if bytes.Contains(p, []byte(s.text)) {
		s.once.Do(func() {
			s.d.cmd.Process.Signal(syscall.SIGSTOP)
			close(s.d.stopped)
		})
	}
	return n, err
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// options of one start.
type opts struct {
	args []string // extra flags
	env  []string // extra KEY=VALUE
	// stopAt, when set, SIGSTOPs the process as soon as its log has this text (from the
	// goroutine that copies the log, before the test goroutine could react); daemon.stopped is
	// closed then.
	stopAt string
	// unprivileged runs the daemon as uid/gid nobody when the tests run as root, so that file
	// permissions bite (see runAsNobody).
	unprivileged bool
	// ignoreHangup starts the daemon with SIGHUP ignored, as nohup does (through sh's trap and
	// exec: the same process).
	ignoreHangup bool
}

// startCmd starts cmd (its environment this process's and env) as a daemon of dir, its log
// copied and, when stopAt is not empty, SIGSTOPped at the first log write holding stopAt (see
// stopper); the test's end kills it.
func startCmd(t *testing.T, dir, stopAt string, env []string, cmd *exec.Cmd) *daemon {
	t.Helper()
	cmd.Env = append(os.Environ(), env...)
	d := &daemon{t: t, dir: dir, cmd: cmd, stderr: &lockedBuffer{}, done: make(chan struct{}), stopped: make(chan struct{})}
	cmd.Stderr = d.stderr
	if stopAt != "" {
		cmd.Stderr = &stopper{w: d.stderr, text: stopAt, d: d}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		cmd.Wait()
		d.state = cmd.ProcessState
		close(d.done)
	}()
	t.Cleanup(d.kill)
	return d
}

// start runs `envsched run --dir dir` with fast polling and a fast status heartbeat.
func start(t *testing.T, dir string, o opts) *daemon {
	t.Helper()
	ensureCatalog(t, dir)
	args := append([]string{"run", "--dir", dir, "--poll-interval", "20ms", "--status-interval", "200ms",
		"--log-format", "json", "--log-level", "debug"}, o.args...)
	cmd := exec.Command(binary, args...)
	if o.ignoreHangup {
		cmd = exec.Command("/bin/sh", append([]string{"-c", `trap "" HUP; exec "$0" "$@"`, binary}, args...)...)
	}
	if o.unprivileged && os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	return startCmd(t, dir, o.stopAt, o.env, cmd)
}

// kill SIGKILLs the process (if it still runs) and waits for it.
func (d *daemon) kill() {
	d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.done
}

// signal sends sig and returns the exit code; -1 means killed by a signal.
func (d *daemon) signal(sig os.Signal) int {
	d.t.Helper()
	d.cmd.Process.Signal(sig)
	return d.wait()
}

// wait waits for the process to end and returns its exit code (-1 when killed by a signal).
func (d *daemon) wait() int {
	d.t.Helper()
	select {
	case <-d.done:
	case <-time.After(60 * time.Second):
		d.t.Fatalf("envsched did not stop\nstderr:\n%s", d.stderr.String())
	}
	return d.state.ExitCode()
}

// exited reports whether the process has ended.
func (d *daemon) exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// waitReady waits until this process has written status.json (its start-up is done).
func (d *daemon) waitReady() {
	d.t.Helper()
	waitUntil(d.t, "status.json from pid", func() bool {
		if d.exited() {
			d.t.Fatalf("envsched exited with %d before it was ready\nstderr:\n%s", d.state.ExitCode(),
				d.stderr.String())
		}
		st, err := readStatus(d.dir)
		return err == nil && st.PID == d.cmd.Process.Pid
	})
}

// status is DIR/status.json.
type status struct {
	PID              int     `json:"pid"`
	Rollouts         int64   `json:"rollouts"`
	Quarantined      int64   `json:"quarantined"`
	Duplicates       int64   `json:"duplicates"`
	Clipped          int64   `json:"clipped"`
	Tasks            int64   `json:"tasks"`
	Envs             int64   `json:"envs"`
	RequestsAnswered int64   `json:"requests_answered"`
	LastRequest      *string `json:"last_request"`
	WatchMode        string  `json:"watch_mode"`
}

func readStatus(dir string) (status, error) {
	var s status
	data, err := os.ReadFile(filepath.Join(dir, "status.json"))
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(data, &s)
}

// waitUntil polls cond; the deadline only turns a hang into a failure.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// writeRequest writes DIR/requests/ID.json the protocol's way.
func writeRequest(t testing.TB, dir, id, body string) {
	t.Helper()
	must(t, tryWriteRequest(dir, id, body))
}

// tryWriteRequest is writeRequest for goroutines other than the test's: it returns the error.
func tryWriteRequest(dir, id, body string) error {
	reqs := filepath.Join(dir, "requests")
	if err := os.MkdirAll(reqs, 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(reqs, "."+id+".json.tmp")
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(reqs, id+".json"))
}

// waitBatch waits for DIR/batches/ID.json and returns it.
func waitBatch(t *testing.T, d *daemon, id string) []byte {
	t.Helper()
	var data []byte
	path := filepath.Join(d.dir, "batches", id+".json")
	deadline := time.Now().Add(90 * time.Second)
	for {
		var err error
		if data, err = os.ReadFile(path); err == nil {
			return data
		}
		if d.exited() || time.Now().After(deadline) {
			t.Fatalf("no batch %s (exited %v)\nstderr:\n%s", id, d.exited(), tail(d.stderr.String(), 4000))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// rolloutsSeen reads rollouts_seen from a batch.
func rolloutsSeen(t *testing.T, batch []byte) int64 {
	t.Helper()
	var b struct {
		RolloutsSeen *int64 `json:"rollouts_seen"`
	}
	if err := json.Unmarshal(batch, &b); err != nil || b.RolloutsSeen == nil {
		t.Fatalf("batch without rollouts_seen (%v): %s", err, batch)
	}
	return *b.RolloutsSeen
}

// rolloutLine is one compact rollout line with a unique id.
func rolloutLine(id string, i int) string {
	return fmt.Sprintf(`{"env":"env-%d","task_id":"task-%d","reward":%d,"step":%d,"rollout_id":"%s"}`+"\n",
		i%4, i%97, (i/3)%2, i/500, id)
}

// dbFacts is what the database holds once no daemon runs: the rollout ids, counters, answers,
// and the result of storage's consistency check (statistics equal a recomputation).
type dbFacts struct {
	ids      map[string]int
	counters storage.Counters
	answers  map[string][]byte
	check    error
}

func readDB(t *testing.T, dir string) dbFacts {
	t.Helper()
	db, err := storage.Open(filepath.Join(dir, "envsched.db"), storage.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f := dbFacts{ids: map[string]int{}, answers: map[string][]byte{}}
	f.check = db.Check(dir)
	err = db.View(func(r *storage.Reader) error {
		var err error
		if f.counters, err = r.Counters(); err != nil {
			return err
		}
		if err := r.Rollouts(func(sr *storage.StoredRollout) error {
			f.ids[sr.RolloutID]++
			return nil
		}); err != nil {
			return err
		}
		return r.Answers(func(id string, a []byte) error {
			f.answers[id] = a
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// checkExactlyOnce asserts that the database holds each written id once and nothing else, and
// that its statistics equal a recomputation.
func checkExactlyOnce(t *testing.T, dir string, written []string) dbFacts {
	t.Helper()
	f := readDB(t, dir)
	if f.check != nil {
		t.Errorf("database check: %v", f.check)
	}
	wrong := 0
	for _, id := range written {
		if f.ids[id] != 1 {
			if wrong < 5 {
				t.Errorf("rollout %s stored %d times; want once", id, f.ids[id])
			}
			wrong++
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d rollouts not stored exactly once", wrong, len(written))
	}
	if len(f.ids) != len(written) || f.counters.Rollouts != int64(len(written)) {
		t.Errorf("database holds %d ids, counter %d; want %d", len(f.ids), f.counters.Rollouts, len(written))
	}
	if f.counters.Duplicates != 0 {
		t.Errorf("%d duplicates counted: some line was read twice", f.counters.Duplicates)
	}
	return f
}

// leftovers lists unfinished writes (dot files) in DIR and DIR/batches.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, sub := range []string{dir, filepath.Join(dir, "batches")} {
		entries, err := os.ReadDir(sub)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				out = append(out, filepath.Join(sub, e.Name()))
			}
		}
	}
	return out
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// reader watches DIR/batches like a trainer: it reads every batch file it sees, checks that it
// is whole JSON, and that it never changes after the first read.
type reader struct {
	dir    string
	mu     sync.Mutex
	first  map[string][]byte
	faults []string
}

func newReader(dir string) *reader { return &reader{dir: dir, first: map[string][]byte{}} }

func (r *reader) run(ctx context.Context) {
	for ctx.Err() == nil {
		r.pass()
		time.Sleep(2 * time.Millisecond)
	}
}

func (r *reader) pass() {
	entries, _ := os.ReadDir(filepath.Join(r.dir, "batches"))
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(r.dir, "batches", name))
		if err != nil {
			continue // removed between listing and reading
		}
		r.see(name, data)
	}
}

func (r *reader) see(name string, data []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !json.Valid(data) {
		r.faults = append(r.faults, fmt.Sprintf("%s read partial or invalid: %q", name, tail(string(data), 200)))
		return
	}
	if old, ok := r.first[name]; !ok {
		r.first[name] = data
	} else if !bytes.Equal(old, data) {
		r.faults = append(r.faults, fmt.Sprintf("%s changed after it was read", name))
	}
}

func (r *reader) report(t *testing.T) map[string][]byte {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.faults {
		t.Error(f)
	}
	return r.first
}

// ensureCatalog gives DIR the catalogue of the tasks rolloutLine writes (4 environments of 97
// tasks) unless it has one, so that the scheduler has tasks from the first request on.
func ensureCatalog(t testing.TB, dir string) {
	t.Helper()
	path := filepath.Join(dir, "catalog", "tasks.jsonl")
	if _, err := os.Stat(path); err == nil {
		return
	}
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	var b strings.Builder
	for i := range 4 * 97 {
		fmt.Fprintf(&b, `{"env":"env-%d","task_id":"task-%d","text":"do thing %d with tool %d"}`+"\n", i%4, i%97, i%13, i%5)
	}
	must(t, os.WriteFile(path, []byte(b.String()), 0o644))
}
