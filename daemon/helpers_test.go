package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// logBuffer collects log lines for assertions on what a user reads.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// running is a daemon served in the background of a test.
type running struct {
	t      *testing.T
	d      *Daemon
	dir    string
	log    *logBuffer
	cancel context.CancelFunc
	done   chan error
}

// testConfig is a Config over dir with fast polling, for tests.
func testConfig(dir string, poll bool) Config {
	return Config{Dir: dir, Poll: poll, PollInterval: 20 * time.Millisecond, BatchSize: 8,
		SafetyInterval: time.Hour, StatusInterval: time.Hour, Version: "test"}
}

// openTest is a Daemon over a fresh DIR with the test catalogue, not running (its methods are
// called directly); it is closed when the test ends.
func openTest(t *testing.T) *Daemon {
	t.Helper()
	dir := t.TempDir()
	writeTestCatalog(t, dir)
	d, err := New(testConfig(dir, false), nil, testParts()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func serveTest(t *testing.T, cfg Config, opts ...Option) *running {
	t.Helper()
	logs := &logBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	writeTestCatalog(t, cfg.Dir)
	opts = append(testParts(), opts...)
	d, err := New(cfg, logger, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{t: t, d: d, dir: cfg.Dir, log: logs, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- d.Run(ctx) }()
	t.Cleanup(func() { r.stop() })
	return r
}

// stop cancels Run, checks that it returned nil, and closes the daemon. It is idempotent.
func (r *running) stop() {
	r.t.Helper()
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	if err := <-r.done; err != nil {
		r.t.Errorf("Run: %v\nlog:\n%s", err, r.log.String())
	}
	if err := r.d.Close(); err != nil {
		r.t.Errorf("Close: %v", err)
	}
}

// writeRequest writes DIR/requests/ID.json the protocol's way: a dot temp file, then a rename.
func writeRequest(t *testing.T, dir, name, body string) {
	t.Helper()
	reqs := filepath.Join(dir, "requests")
	if err := os.MkdirAll(reqs, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(reqs, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(reqs, name)); err != nil {
		t.Fatal(err)
	}
}

// waitFile waits until path exists and returns its bytes; the deadline only turns a hang into
// a failure with the log.
func (r *running) waitFile(path string) []byte {
	r.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, err := os.ReadFile(path)
		if err == nil {
			return data
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%s never appeared\nlog:\n%s", path, r.log.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (r *running) batch(id string) []byte {
	r.t.Helper()
	return r.waitFile(filepath.Join(r.dir, "batches", id+".json"))
}

func (r *running) errorOf(name string) map[string]string {
	r.t.Helper()
	data := r.waitFile(filepath.Join(r.dir, "batches", errorFileName(name)))
	var m map[string]string
	if err := json.Unmarshal(data, &m); err != nil {
		r.t.Fatalf("error file %s is not JSON: %v: %s", name, err, data)
	}
	return m
}

// tempFiles lists envsched's unfinished writes left in DIR and DIR/batches.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, sub := range []string{dir, filepath.Join(dir, "batches")} {
		entries, err := os.ReadDir(sub)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if n := e.Name(); len(n) > 0 && n[0] == '.' {
				out = append(out, filepath.Join(sub, n))
			}
		}
	}
	return out
}

// readStatus reads DIR/status.json as a trainer would.
func readStatus(dir string) (Status, error) {
	var s Status
	data, err := os.ReadFile(filepath.Join(dir, StatusFile))
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(data, &s)
}
