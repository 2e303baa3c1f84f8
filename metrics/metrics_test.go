package metrics_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/envsched/envsched/ingest"
	"github.com/envsched/envsched/metrics"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// scrape fetches /metrics and returns the unlabelled samples by name.
func scrape(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("scrape: %s: %s", resp.Status, body)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 || strings.HasPrefix(f[0], "#") || strings.Contains(f[0], "{") {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			t.Fatalf("sample %q: %v", sc.Text(), err)
		}
		out[f[0]] = v
	}
	return out
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

func rolloutLines(from, n int) string {
	var b strings.Builder
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, `{"env": "web", "task_id": "%d", "reward": %d, "step": 1, "rollout_id": "r%d"}`+"\n", i%3, i%2, i)
	}
	return b.String()
}

// TestScrapeFollowsTheDatabase serves the metrics of a real database over real HTTP: counts
// move as rollouts are ingested and requests answered, the lag counts bytes not yet read.
func TestScrapeFollowsTheDatabase(t *testing.T) {
	dir := t.TempDir()
	rollouts := filepath.Join(dir, "rollouts")
	if err := os.MkdirAll(rollouts, 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := storage.Open(filepath.Join(dir, "envsched.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	in, err := ingest.New(db, dir, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New(db, dir, nil)
	ln, err := metrics.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := m.Serve(ctx, ln); err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	defer func() { cancel(); wg.Wait() }()
	addr := ln.Addr().String()

	s := scrape(t, addr)
	if s["envsched_rollouts_ingested_total"] != 0 || s["envsched_ingest_lag_bytes"] != 0 || s["envsched_db_size_bytes"] <= 0 {
		t.Fatalf("empty database: %v", pick(s))
	}
	file := filepath.Join(rollouts, "a.jsonl")
	text := rolloutLines(0, 10) + "not json\n"
	appendFile(t, file, text)
	if s = scrape(t, addr); s["envsched_ingest_lag_bytes"] != float64(len(text)) || s["envsched_ingest_lag_files"] != 1 {
		t.Fatalf("before ingest: lag %v, want %d bytes", pick(s), len(text))
	}
	if _, err := in.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	partial := `{"env": "web", "task_id": "1", "rew`
	appendFile(t, file, partial) // an unfinished line waits: it is lag
	s = scrape(t, addr)
	want := map[string]float64{"envsched_rollouts_ingested_total": 10, "envsched_quarantined_total": 1,
		"envsched_tasks": 3, "envsched_envs": 1, "envsched_ingest_lag_bytes": float64(len(partial))}
	for k, v := range want {
		if s[k] != v {
			t.Errorf("after ingest: %s = %v, want %v", k, s[k], v)
		}
	}
	if err := db.StoreAnswer("step-1", 1, []byte(`{"id": "step-1"}`), nil, nil); err != nil {
		t.Fatal(err)
	}
	m.ObserveRequest(30 * time.Millisecond)
	s = scrape(t, addr)
	if s["envsched_requests_answered_total"] != 1 || s["envsched_request_duration_seconds_count"] != 1 {
		t.Fatalf("after an answer: %v", pick(s))
	}
	storagetest.MustCheck(t, db, dir)
}

func pick(s map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range s {
		if strings.HasPrefix(k, "envsched_") {
			out[k] = v
		}
	}
	return out
}

func TestListenDefaultsToLoopback(t *testing.T) {
	ln, err := metrics.Listen(":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
		t.Fatalf("listening on %v, want loopback", ip)
	}
	if _, err := metrics.Listen("9464"); err == nil {
		t.Fatal("an address without a colon was accepted")
	}
}
