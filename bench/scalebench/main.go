// Command scalebench is the helper of bench/scale.sh: it writes the exchange folders of the
// scale benchmark and measures the real binary on them as whole processes, with the defaults
// (feature prior on).
//
//	scalebench gen -tasks N DIR                 catalogue of N tasks and a history of rollouts
//	scalebench measure -bin ENVSCHED -runs 3 DIR
//	scalebench restart -bin ENVSCHED -rollouts 10000000 -runs 3 DIR
//
// gen writes DIR/cat/catalog/catalog.jsonl (N tasks over 20 environments, a 4,000-word
// vocabulary, 10 to 20 words and 1 to 3 tools a task) and DIR/full/, the same catalogue (a hard
// link) with DIR/full/rollouts/history.jsonl: one group of 8 rollouts for half the tasks, over
// 40 steps, rewards drawn from a probability that the task's first words set.
//
// measure runs, each of -runs times: `envsched ingest` of DIR/cat into a new database (the
// catalogue ingest with its graph build: wall time and the process's peak RSS; -ingest=false
// leaves it out); then, on a
// copy of DIR/full's database (ingested once beforehand), `envsched run` with a request waiting
// (the first answer after start), 20 requests of 512 one after another, then requests of the
// default size while a writer appends 5,000 lines/s, and the daemon's peak RSS (VmHWM). It
// prints one line per figure and run, then the min and median of each, with the load average.
//
// restart writes -rollouts compact lines, ingests them once, and each run copies the database,
// adds one new file of 1,000 lines and a request, starts the daemon and times the answer.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/envsched/envsched/bench/benchdata"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "scalebench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 1 {
		return errors.New("usage: scalebench gen|measure|restart ...")
	}
	fl := flag.NewFlagSet(args[0], flag.ContinueOnError)
	tasks := fl.Int("tasks", 100_000, "catalogue tasks (gen)")
	bin := fl.String("bin", "envsched", "the envsched binary (measure, restart)")
	runs := fl.Int("runs", 3, "repetitions (measure, restart)")
	rollouts := fl.Int("rollouts", 10_000_000, "stored rollouts (restart)")
	requests := fl.Int("requests", 100, "requests while the writer runs (measure)")
	ingest := fl.Bool("ingest", true, "measure the catalogue ingest too (measure)")
	if err := fl.Parse(args[1:]); err != nil {
		return err
	}
	if fl.NArg() != 1 {
		return fmt.Errorf("usage: scalebench %s [flags] DIR", args[0])
	}
	dir := fl.Arg(0)
	switch args[0] {
	case "gen":
		return gen(dir, *tasks)
	case "measure":
		return measure(*bin, dir, *runs, *requests, *ingest)
	case "restart":
		return restart(*bin, dir, *rollouts, *runs)
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// Shape of the catalogue.
const (
	envs      = 20
	vocab     = 4000
	toolsEach = 15 // tools per environment
)

func gen(dir string, n int) error {
	for _, d := range []string{"cat/catalog", "full/catalog", "full/rollouts"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	catPath := filepath.Join(dir, "cat/catalog/catalog.jsonl")
	cf, err := os.Create(catPath)
	if err != nil {
		return err
	}
	hf, err := os.Create(filepath.Join(dir, "full/rollouts/history.jsonl"))
	if err != nil {
		return err
	}
	cw, hw := bufio.NewWriterSize(cf, 1<<20), bufio.NewWriterSize(hf, 1<<20)
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	zipf := rand.NewZipf(rng, 1.1, 3, vocab-1)
	effect := make([]float64, vocab)
	for i := range effect {
		effect[i] = rng.NormFloat64() * 0.8
	}
	words := make([]string, 0, 20)
	seq := 0
	for i := range n {
		env := i % envs
		words, logit := words[:0], 0.0
		for k := range 10 + rng.IntN(11) {
			w := zipf.Uint64()
			if k < 3 {
				logit += effect[w]
			}
			words = append(words, "w"+strconv.FormatUint(w, 36))
		}
		tools := make([]string, 1+rng.IntN(3))
		for k := range tools {
			tools[k] = fmt.Sprintf("e%d_tool%d", env, rng.IntN(toolsEach))
		}
		row, _ := json.Marshal(map[string]any{"env": fmt.Sprint("env-", env), "task_id": fmt.Sprintf("t%07d", i),
			"text": strings.Join(words, " "), "tools": tools})
		cw.Write(append(row, '\n'))
		if rng.IntN(2) == 0 {
			continue
		}
		p := 1 / (1 + math.Exp(-logit))
		step := 1 + rng.IntN(40)
		for range 8 {
			seq++
			r := 0
			if rng.Float64() < p {
				r = 1
			}
			fmt.Fprintf(hw, `{"env":"env-%d","task_id":"t%07d","reward":%d,"step":%d,"group_id":"g%d","rollout_id":"h%d"}`+"\n",
				env, i, r, step, i, seq)
		}
	}
	for _, w := range []*bufio.Writer{cw, hw} {
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if err := errors.Join(cf.Close(), hf.Close()); err != nil {
		return err
	}
	fmt.Printf("wrote %d tasks and %d rollouts under %s\n", n, seq, dir)
	return os.Link(catPath, filepath.Join(dir, "full/catalog/catalog.jsonl"))
}

// figures collects the values of each figure over the runs.
type figures struct {
	names []string
	vals  map[string][]float64
}

func (f *figures) add(name string, v float64) {
	if f.vals == nil {
		f.vals = map[string][]float64{}
	}
	if _, ok := f.vals[name]; !ok {
		f.names = append(f.names, name)
	}
	f.vals[name] = append(f.vals[name], v)
	fmt.Printf("  %-44s %10.1f\n", name, v)
}

func (f *figures) summary(title string) {
	fmt.Printf("%s: min / median over %s\n", title, "the runs")
	for _, name := range f.names {
		xs := slices.Clone(f.vals[name])
		slices.Sort(xs)
		fmt.Printf("  %-44s min %10.1f  median %10.1f  (%d runs)\n", name, xs[0], xs[len(xs)/2], len(xs))
	}
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func measure(bin, dir string, runs, requests int, ingest bool) error {
	var f figures
	fmt.Printf("load average at start: %s\n", loadavg())
	// the daemon's database, ingested once; each run works on a copy
	base := filepath.Join(dir, "full.db")
	if _, err := os.Stat(base); err != nil {
		wall, rss, err := timed(bin, "ingest", "--dir", filepath.Join(dir, "full"), "--db", base)
		if err != nil {
			return err
		}
		fmt.Printf("ingested %s (catalogue and history) in %.1f s, peak RSS %.0f MiB\n", filepath.Join(dir, "full"), wall.Seconds(), rss)
	}
	for k := range runs {
		fmt.Printf("run %d (load average %s)\n", k+1, loadavg())
		if ingest {
			db := filepath.Join(dir, fmt.Sprintf("cat-%d.db", k))
			os.Remove(db)
			wall, rss, err := timed(bin, "ingest", "--dir", filepath.Join(dir, "cat"), "--db", db)
			if err != nil {
				return err
			}
			os.Remove(db)
			f.add("catalogue ingest + graph build s", wall.Seconds())
			f.add("catalogue ingest peak RSS MiB", rss)
		}
		if err := daemonRun(bin, dir, base, k, requests, &f); err != nil {
			return err
		}
	}
	f.summary(fmt.Sprintf("%s (load average at end %s)", dir, loadavg()))
	return nil
}

// timed runs bin with args and returns its wall time and peak RSS in MiB.
func timed(bin string, args ...string) (time.Duration, float64, error) {
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	begin := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("%s %v: %w\n%s", bin, args, err, stderr.String())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return time.Since(begin), float64(ru.Maxrss) / 1024, nil
}

// daemon is one envsched run process.
type daemon struct {
	cmd  *exec.Cmd
	log  *lockedBuffer
	done chan struct{}
	dir  string
}

func startDaemon(bin, dir, db string, extra ...string) (*daemon, error) {
	d := &daemon{log: &lockedBuffer{}, done: make(chan struct{}), dir: dir}
	args := append([]string{"run", "--dir", dir, "--db", db, "--log-format", "json"}, extra...)
	d.cmd = exec.Command(bin, args...)
	d.cmd.Stderr = d.log
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { d.cmd.Wait(); close(d.done) }()
	return d, nil
}

// stop ends the daemon with SIGTERM and waits for it.
func (d *daemon) stop() {
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(2 * time.Minute):
		d.cmd.Process.Kill()
		<-d.done
	}
}

// hwm is the daemon's VmHWM in MiB.
func (d *daemon) hwm() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return -1
}

// request writes request id and returns the time until its batch file is visible.
func (d *daemon) request(id, body string) (time.Duration, error) {
	reqs := filepath.Join(d.dir, "requests")
	if err := os.MkdirAll(reqs, 0o755); err != nil {
		return 0, err
	}
	tmp := filepath.Join(reqs, "."+id+".tmp")
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		return 0, err
	}
	begin := time.Now()
	if err := os.Rename(tmp, filepath.Join(reqs, id+".json")); err != nil {
		return 0, err
	}
	return d.wait(id, begin)
}

func (d *daemon) wait(id string, begin time.Time) (time.Duration, error) {
	path := filepath.Join(d.dir, "batches", id+".json")
	for {
		if _, err := os.Stat(path); err == nil {
			return time.Since(begin), nil
		}
		select {
		case <-d.done:
			return 0, fmt.Errorf("daemon exited\n%s", tail(d.log.String()))
		default:
		}
		if time.Since(begin) > 30*time.Minute {
			return 0, fmt.Errorf("no batch %s after 30 minutes", id)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

func tail(s string) string {
	if len(s) > 4000 {
		return s[len(s)-4000:]
	}
	return s
}

func cleanExchange(dir string) {
	os.RemoveAll(filepath.Join(dir, "requests"))
	os.RemoveAll(filepath.Join(dir, "batches"))
	old, _ := filepath.Glob(filepath.Join(dir, "rollouts", "stream-*"))
	for _, p := range old {
		os.Remove(p)
	}
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// daemonRun is one run of the daemon on a copy of base.
func daemonRun(bin, dir, base string, k, requests int, f *figures) error {
	full := filepath.Join(dir, "full")
	cleanExchange(full)
	db := filepath.Join(dir, fmt.Sprintf("daemon-%d.db", k))
	if err := copyFile(db, base); err != nil {
		return err
	}
	defer os.Remove(db)
	reqs := filepath.Join(full, "requests")
	if err := os.MkdirAll(reqs, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(reqs, "first.json"), []byte(`{"size": 512}`), 0o644); err != nil {
		return err
	}
	begin := time.Now()
	d, err := startDaemon(bin, full, db)
	if err != nil {
		return err
	}
	defer d.stop()
	first, err := d.wait("first", begin)
	if err != nil {
		return err
	}
	f.add("first answer after start ms", ms(first))
	var b512 []float64
	for i := range 20 {
		lat, err := d.request(fmt.Sprintf("b512-%d", i), `{"size": 512}`)
		if err != nil {
			return err
		}
		b512 = append(b512, ms(lat))
	}
	f.add("batch of 512, request to file, median ms", quantile(b512, 0.5))
	f.add("batch of 512, choose, median ms", quantile(answered(d.log.String(), "choose_ms", "b512-"), 0.5))
	ctx, stop := context.WithCancel(context.Background())
	written := writer(ctx, full, k, 5000)
	time.Sleep(500 * time.Millisecond)
	var lat []float64
	for i := range requests {
		l, err := d.request(fmt.Sprintf("lat-%d", i), `{}`)
		if err != nil {
			stop()
			return err
		}
		lat = append(lat, ms(l))
		time.Sleep(time.Duration(5+i%20) * time.Millisecond)
	}
	stop()
	f.add("with writer 5,000 lines/s: p50 ms", quantile(lat, 0.5))
	f.add("with writer 5,000 lines/s: p99 ms", quantile(lat, 0.99))
	f.add("lines written meanwhile", float64(written.Load()))
	f.add("daemon peak RSS (VmHWM) MiB", d.hwm())
	return nil
}

// writer appends rollouts of catalogue tasks at rate lines a second to two files, in chunks
// every 10 ms, until ctx ends.
func writer(ctx context.Context, dir string, run, rate int) *atomic.Int64 {
	var n atomic.Int64
	go func() {
		var files []*os.File
		for i := range 2 {
			f, err := os.Create(filepath.Join(dir, "rollouts", fmt.Sprintf("stream-%d-%d.jsonl", run, i)))
			if err != nil {
				return
			}
			defer f.Close()
			files = append(files, f)
		}
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			var b strings.Builder
			for range rate / 100 {
				k := int(n.Add(1))
				task := (k / 8) * 7919 % 1000
				fmt.Fprintf(&b, `{"env":"env-%d","task_id":"t%07d","reward":%d,"group_id":"s%d-%d","rollout_id":"s%d-%d"}`+"\n",
					task%envs, task, k%2, run, k/8, run, k)
			}
			files[i%2].WriteString(b.String())
		}
	}()
	return &n
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[int(q*float64(len(xs)-1)+0.5)]
}

// answered collects one numeric field of the daemon's "answered" log lines whose id starts
// with prefix.
func answered(log, key, prefix string) []float64 {
	var out []float64
	for _, line := range strings.Split(log, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != "answered" {
			continue
		}
		if id, _ := rec["id"].(string); !strings.HasPrefix(id, prefix) {
			continue
		}
		if v, ok := rec[key].(float64); ok {
			out = append(out, v)
		}
	}
	return out
}

// restart measures the first answer of a daemon started on a database of n rollouts with a
// new file of 1,000 lines waiting.
func restart(bin, dir string, n, runs int) error {
	var f figures
	ex := filepath.Join(dir, "ex")
	base := filepath.Join(dir, "base.db")
	if _, err := os.Stat(base); err != nil {
		if _, err := benchdata.Write(filepath.Join(ex, "rollouts"), benchdata.Spec{Shape: benchdata.Compact, Lines: n, Files: 16, Seed: 1}); err != nil {
			return err
		}
		wall, _, err := timed(bin, "ingest", "--dir", ex, "--db", base)
		if err != nil {
			return err
		}
		fmt.Printf("ingested %d rollouts in %.1f s\n", n, wall.Seconds())
	}
	for k := range runs {
		fmt.Printf("run %d (load average %s)\n", k+1, loadavg())
		cleanExchange(ex)
		db := filepath.Join(dir, "restart.db")
		if err := copyFile(db, base); err != nil {
			return err
		}
		var b strings.Builder
		for i := range 1000 {
			fmt.Fprintf(&b, `{"env":"env-0","task_id":"task-%d","reward":1,"step":100000,"group_id":"n%d","rollout_id":"new-%d-%d"}`+"\n", i%50, i/8, k, i)
		}
		if err := os.WriteFile(filepath.Join(ex, "rollouts", "stream-new.jsonl"), []byte(b.String()), 0o644); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(ex, "requests"), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(ex, "requests", "first.json"), []byte(`{}`), 0o644); err != nil {
			return err
		}
		begin := time.Now()
		d, err := startDaemon(bin, ex, db)
		if err != nil {
			return err
		}
		first, err := d.wait("first", begin)
		if err == nil {
			f.add("first answer, 1,000 new lines waiting ms", ms(first))
			f.add("daemon peak RSS (VmHWM) MiB", d.hwm())
		}
		d.stop()
		os.Remove(db)
		if err != nil {
			return err
		}
	}
	f.summary(fmt.Sprintf("restart on %d rollouts (load average at end %s)", n, loadavg()))
	return nil
}

// lockedBuffer is the daemon's stderr: exec copies into it from a goroutine while the
// benchmark reads it.
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
