package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"image/png"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/envsched/envsched/report"
)

// opsBinDir is the folder of the binary opsBinary built, removed by TestMain after the tests
// (a 38 MB binary was left in the temporary folder by every run).
var opsBinDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if opsBinDir != "" {
		os.RemoveAll(opsBinDir)
	}
	os.Exit(code)
}

// opsBinary builds the envsched binary once for the tests that run it.
var opsBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "envsched-ops-")
	if err != nil {
		return "", err
	}
	opsBinDir = dir
	bin := filepath.Join(dir, "envsched")
	out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// opsRun runs the binary to completion and returns its exit code and output.
func opsRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	bin, err := opsBinary()
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errOut.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errOut.String()
}

// waitFor polls cond until it holds; a generous deadline only guards against a hung test.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("gave up waiting for %s", what)
}

// statusRollouts reads DIR/status.json's rollouts count (-1 when unreadable).
func statusRollouts(dir string) int64 {
	var s struct{ Rollouts int64 }
	data, err := os.ReadFile(filepath.Join(dir, "status.json"))
	if err != nil || json.Unmarshal(data, &s) != nil {
		return -1
	}
	return s.Rollouts
}

// freeAddr is a loopback address with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// scrapeMetrics fetches http://addr/metrics and returns the unlabelled samples by name.
func scrapeMetrics(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || strings.HasPrefix(f[0], "#") || strings.Contains(f[0], "{") {
			continue
		}
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			out[f[0]] = v
		}
	}
	return out
}

func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// TestOpsBesideRunningDaemon runs the real daemon (with --metrics-addr) and checks that the
// metrics follow ingested rollouts and answered requests; while it holds the database, runs the
// reading commands (through its snapshots), compact (refused, exit 3) and status; then stops
// it and checks that status says so and compact works.
func TestOpsBesideRunningDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin, err := opsBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "rollouts"), 0o755); err != nil {
		t.Fatal(err)
	}
	var lines strings.Builder
	for i := range 50 {
		fmt.Fprintf(&lines, `{"env": "web", "task_id": "%d", "reward": %d, "step": 1, "group_id": "g%d"}`+"\n", i%5, i%2, i%5)
	}
	if err := os.WriteFile(filepath.Join(dir, "rollouts", "a.jsonl"), []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	var stderr bytes.Buffer
	daemon := exec.Command(bin, "run", "--dir", dir, "--status-interval", "100ms", "--poll", "--poll-interval", "20ms",
		"--metrics-addr", addr)
	daemon.Stderr = &stderr
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	defer daemon.Process.Kill()
	waitFor(t, "the daemon to ingest 50 rollouts", func() bool { return statusRollouts(dir) == 50 })
	m := scrapeMetrics(t, addr)
	if m["envsched_rollouts_ingested_total"] != 50 || m["envsched_requests_answered_total"] != 0 || m["envsched_tasks"] != 5 {
		t.Fatalf("metrics after the backlog: %v", m)
	}
	more := `{"env": "web", "task_id": "9", "reward": 1, "step": 2}` + "\n"
	appendTo(t, filepath.Join(dir, "rollouts", "a.jsonl"), more)
	waitFor(t, "the daemon to ingest 51 rollouts", func() bool { return statusRollouts(dir) == 51 })
	tmp := filepath.Join(dir, "requests", ".step-2.json.tmp") // as a trainer writes: then rename
	if err := os.WriteFile(tmp, []byte(`{"size": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "requests", "step-2.json")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the batch", func() bool {
		_, err := os.Stat(filepath.Join(dir, "batches", "step-2.json"))
		return err == nil
	})
	waitFor(t, "the answer in the metrics", func() bool {
		return scrapeMetrics(t, addr)["envsched_request_duration_seconds_count"] == 1
	})
	m = scrapeMetrics(t, addr)
	if m["envsched_rollouts_ingested_total"] != 51 || m["envsched_requests_answered_total"] != 1 || m["envsched_tasks"] != 6 {
		t.Fatalf("metrics after a rollout and a request: %v", m)
	}

	code, out, errOut := opsRun(t, "export", "--dir", dir, "--what", "rollouts")
	if code != 0 || strings.Count(out, "\n") != 51 {
		t.Fatalf("export beside the daemon: exit %d, %d lines, %s", code, strings.Count(out, "\n"), errOut)
	}
	if code, out, errOut := opsRun(t, "stats", "--dir", dir, "--json"); code != 0 || !strings.Contains(out, `"rollouts": 51`) {
		t.Fatalf("stats beside the daemon: exit %d, %s %s", code, out, errOut)
	}
	report := filepath.Join(t.TempDir(), "r.html")
	if code, _, errOut := opsRun(t, "report", "--dir", dir, "--out", report); code != 0 {
		t.Fatalf("report beside the daemon: exit %d, %s", code, errOut)
	}
	if code, _, errOut := opsRun(t, "compact", "--dir", dir); code != exitLocked {
		t.Fatalf("compact beside the daemon: exit %d, want %d: %s", code, exitLocked, errOut)
	}
	if code, out, _ := opsRun(t, "status", "--dir", dir); code != 0 || !strings.Contains(out, "running") {
		t.Fatalf("status of a running daemon: exit %d, %s", code, out)
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "snapshots")); len(left) != 0 {
		t.Fatalf("snapshot files left: %v", left)
	}

	if err := daemon.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := daemon.Wait(); err != nil {
		t.Fatalf("daemon: %v\n%s", err, stderr.String())
	}
	if code, out, _ := opsRun(t, "status", "--dir", dir, "--stale-after", "1ns"); code != exitError || !strings.Contains(out, "NOT RUNNING") {
		t.Fatalf("status of a stopped daemon: exit %d, %s", code, out)
	}
	if code, out, errOut := opsRun(t, "compact", "--dir", dir); code != 0 || !strings.Contains(out, "compacted") {
		t.Fatalf("compact after the daemon stopped: exit %d, %s %s", code, out, errOut)
	}
	if code, out, _ := opsRun(t, "export", "--dir", dir, "--what", "rollouts"); code != 0 || strings.Count(out, "\n") != 51 {
		t.Fatalf("export after compaction: exit %d, %d lines", code, strings.Count(out, "\n"))
	}
}

// TestReportOfDemoRun reports on the database of a simulated run (`envsched demo`: the real
// daemon answering a simulated trainer through files): every plot is there and decodes.
func TestReportOfDemoRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := filepath.Join(t.TempDir(), "demo")
	if code, _, errOut := opsRun(t, "demo", "--steps", "6", "--out", dir); code != 0 {
		t.Fatalf("demo: exit %d: %s", code, errOut)
	}
	out := filepath.Join(t.TempDir(), "report.html")
	if code, _, errOut := opsRun(t, "report", "--dir", dir, "--out", out); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(string(data))
	srcs := regexp.MustCompile(`src="data:image/png;base64,([^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(srcs) != len(report.FigureIDs) {
		t.Fatalf("%d embedded plots, want %d", len(srcs), len(report.FigureIDs))
	}
	for i, m := range srcs {
		raw, err := base64.StdEncoding.DecodeString(m[1])
		if err != nil {
			t.Fatalf("plot %d: %v", i, err)
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("plot %d: %v", i, err)
		}
		if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 200 {
			t.Fatalf("plot %d is %dx%d", i, b.Dx(), b.Dy())
		}
	}
	for _, id := range report.FigureIDs {
		if !strings.Contains(page, `<section id="`+id+`"`) {
			t.Errorf("no section %s", id)
		}
	}
}
