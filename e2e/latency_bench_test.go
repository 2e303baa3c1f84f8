package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// writeCatalog writes n tasks over 8 environments to DIR/catalog/tasks.jsonl.
func writeCatalog(tb testing.TB, dir string, n int) {
	tb.Helper()
	must(tb, os.MkdirAll(filepath.Join(dir, "catalog"), 0o755))
	var b strings.Builder
	words := []string{"search", "flight", "refund", "order", "weather", "calendar", "email", "file",
		"booking", "account", "invoice", "ticket", "route", "price", "review", "schedule"}
	for i := range n {
		fmt.Fprintf(&b, `{"env":"env-%d","task_id":"task-%d","text":"%s the %s for case %d","tools":["%s_tool"]}`+"\n",
			i%8, i, words[i%16], words[(i/16)%16], i%1000, words[(i/7)%16])
	}
	must(tb, os.WriteFile(filepath.Join(dir, "catalog", "tasks.jsonl"), []byte(b.String()), 0o644))
}

// stream appends rollouts of catalogue tasks at about rate lines per second, in chunks every
// 10 ms spread over four files, until ctx is done. It returns the lines written.
func stream(ctx context.Context, tb testing.TB, dir string, tasks, rate int) *atomic.Int64 {
	var n atomic.Int64
	var files []*os.File
	for i := range 4 {
		f, err := os.OpenFile(filepath.Join(dir, "rollouts", fmt.Sprintf("stream-%d.jsonl", i)),
			os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		must(tb, err)
		files = append(files, f)
	}
	go func() {
		defer func() {
			for _, f := range files {
				f.Close()
			}
		}()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		per := rate / 100
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			var b strings.Builder
			for j := range per {
				k := int(n.Add(1))
				fmt.Fprintf(&b, `{"env":"env-%d","task_id":"task-%d","reward":%d,"group_id":"g%d","rollout_id":"s%d"}`+"\n",
					(k/8)%8, ((k/8)%8)+8*((k/64)%(tasks/8)), (k*7/3)%2, k/8, k)
				_ = j
			}
			files[i%4].WriteString(b.String())
		}
	}()
	return &n
}

// BenchmarkRequestLatency measures the time from a request file's rename into DIR/requests to
// its batch file being visible, with fsnotify and with polling (default --poll-interval), at 10k
// and 100k catalogue tasks, while rollouts stream in at 5,000 lines/s. Each iteration is one
// request; run with -benchtime=200x or so for stable percentiles.
func BenchmarkRequestLatency(b *testing.B) {
	for _, tasks := range []int{10000, 100000} {
		for _, mode := range []string{"notify", "poll", "poll-50ms"} {
			if mode == "poll-50ms" && tasks > 10000 {
				continue
			}
			b.Run(fmt.Sprintf("tasks=%d/mode=%s", tasks, mode), func(b *testing.B) {
				benchLatency(b, tasks, mode)
			})
		}
	}
}

func benchLatency(b *testing.B, tasks int, mode string) {
	dir := b.TempDir()
	writeCatalog(b, dir, tasks)
	must(b, os.MkdirAll(filepath.Join(dir, "rollouts"), 0o755))
	args := []string{"--log-level", "info", "--log-format", "json", "--batch-size", "256"}
	switch mode {
	case "poll":
		args = append(args, "--poll", "--poll-interval", "250ms")
	case "poll-50ms":
		args = append(args, "--poll", "--poll-interval", "50ms")
	}
	d := startBench(b, dir, args)
	ctx, stop := context.WithCancel(context.Background())
	lines := stream(ctx, b, dir, tasks, 5000)
	time.Sleep(500 * time.Millisecond) // let the stream settle
	// The first request after a start loads the statistics and builds the graph; it is timed
	// apart (first-ms) and not among the percentiles.
	begin := time.Now()
	writeRequest(b, dir, "warm-up", `{}`)
	waitVisible(b, d, filepath.Join(dir, "batches", "warm-up.json"))
	first := time.Since(begin)
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		id := "lat-" + strconv.Itoa(i)
		begin := time.Now()
		writeRequest(b, dir, id, `{}`)
		waitVisible(b, d, filepath.Join(dir, "batches", id+".json"))
		lat = append(lat, time.Since(begin))
		time.Sleep(time.Duration(5+i%20) * time.Millisecond)
	}
	b.StopTimer()
	stop()
	d.cmd.Process.Signal(syscall.SIGTERM)
	<-d.done
	slices.Sort(lat)
	b.ReportMetric(ms(lat[len(lat)/2]), "median-ms")
	b.ReportMetric(ms(lat[(len(lat)*99)/100]), "p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
	b.ReportMetric(ms(first), "first-ms")
	b.ReportMetric(float64(lines.Load()), "lines-streamed")
	for _, part := range []string{"ms", "barrier_ms", "choose_ms", "publish_ms"} {
		xs := answeredField(d.stderr.String(), part)
		name := strings.TrimSuffix(strings.TrimSuffix(part, "ms"), "_")
		if name == "" {
			name = "in-daemon"
		}
		b.ReportMetric(quantile(xs, 0.5), "median-"+name+"-ms")
		b.ReportMetric(quantile(xs, 0.99), "p99-"+name+"-ms")
	}
	b.ReportMetric(0, "ns/op")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// startBench starts a daemon for a benchmark and waits until its start-up is done.
func startBench(b *testing.B, dir string, args []string) *daemon {
	b.Helper()
	d := &daemon{dir: dir, stderr: &lockedBuffer{}, done: make(chan struct{})}
	d.cmd = execCommand(append([]string{"run", "--dir", dir}, args...))
	d.cmd.Stderr = d.stderr
	must(b, d.cmd.Start())
	go func() { d.cmd.Wait(); d.state = d.cmd.ProcessState; close(d.done) }()
	b.Cleanup(func() { d.cmd.Process.Signal(syscall.SIGKILL); <-d.done })
	deadline := time.Now().Add(10 * time.Minute)
	for {
		st, err := readStatus(dir)
		if err == nil && st.PID == d.cmd.Process.Pid {
			return d
		}
		if d.exited() || time.Now().After(deadline) {
			b.Fatalf("daemon not ready\n%s", tail(d.stderr.String(), 4000))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitVisible spins until path can be opened: a trainer polling for its batch.
func waitVisible(tb testing.TB, d *daemon, path string) {
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if d.exited() {
			tb.Fatalf("daemon exited\n%s", tail(d.stderr.String(), 4000))
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// answeredField collects one numeric field of the daemon's "answered" log lines (JSON).
func answeredField(log, key string) []float64 {
	var out []float64
	for _, line := range strings.Split(log, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != "answered" {
			continue
		}
		if v, ok := rec[key].(float64); ok {
			out = append(out, v)
		}
	}
	return out
}

func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	return xs[int(q*float64(len(xs)-1)+0.5)]
}
