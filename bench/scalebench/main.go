// Command scalebench is the helper of bench/scale.sh: it writes the exchange folders of the
// scale benchmark and measures the real binary on them as whole processes, with the defaults
// (feature prior on).
//
//	scalebench gen -tasks N [-history R] DIR     catalogue of N tasks and a history of rollouts
//	scalebench measure -bin ENVSCHED -runs 3 [-parts ingest,first,batch,latency] DIR
//	scalebench restart -bin ENVSCHED -rollouts 10000000 -runs 3 DIR
//
// gen writes DIR/cat/catalog/catalog.jsonl (N tasks over 20 environments, a 4,000-word
// vocabulary, 10 to 20 words and 1 to 3 tools a task) and DIR/full/, the same catalogue (a hard
// link) with DIR/full/rollouts/history.jsonl: R rollouts in groups of 8 of tasks drawn at random
// (R = 0: one group for half of the tasks), over 40 steps, rewards drawn from a probability
// that the task's first words set.
//
// measure runs, each of -runs times and for each binary of -bin in turn: `envsched ingest` of
// DIR/cat into a new database (the catalogue ingest with its graph build: wall time and the
// process's peak RSS); then, on a copy of DIR/full's database (ingested once, and kept for the
// next measure while -stamp stays the same), `envsched run` with a request of 512 waiting (the
// first answer after start), 20 requests of 512 one after another, requests of the default
// size while a writer appends 5,000 lines/s, and the daemon's memory (VmHWM, and RssAnon and
// RssFile at the end). -parts chooses among these. It prints one line per figure and run, then
// the min and median of each, with the load average.
//
// restart writes -rollouts compact lines, ingests them once (kept like measure's database),
// and each run copies the database, adds one new file of 1,000 lines and a request, starts the
// daemon and times the answer.
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
	history := fl.Int("history", 0, "rollouts of the history, in groups of 8 (gen; 0: one group for half of the tasks)")
	bin := fl.String("bin", "envsched", "the envsched binary, or NAME=PATH,NAME=PATH,... to measure several in turn, interleaved (measure, restart)")
	parts := fl.String("parts", "ingest,first,batch,latency", "what measure measures: ingest (the catalogue with its graph build), first (first answer), batch (20 batches of 512), latency (with a writer); the daemon's memory always")
	stamp := fl.String("stamp", "", "the version of the code that made the cached databases: one made by another is made again (measure, restart)")
	runs := fl.Int("runs", 3, "repetitions (measure, restart)")
	rollouts := fl.Int("rollouts", 10_000_000, "stored rollouts (restart)")
	requests := fl.Int("requests", 100, "requests while the writer runs (measure)")
	if err := fl.Parse(args[1:]); err != nil {
		return err
	}
	if fl.NArg() != 1 {
		return fmt.Errorf("usage: scalebench %s [flags] DIR", args[0])
	}
	dir := fl.Arg(0)
	switch args[0] {
	case "gen":
		return gen(dir, *tasks, *history)
	case "measure":
		return measure(binaries(*bin), dir, *runs, *requests, partSet(*parts), *stamp)
	case "restart":
		return restart(binaries(*bin), dir, *rollouts, *runs, *stamp)
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// Shape of the catalogue.
const (
	envs      = 20
	vocab     = 4000
	toolsEach = 15 // tools per environment
)

// gen writes the catalogue of n tasks and the history of rollouts (history groups of 8; 0: one
// group for half of the tasks). Everything is a function of n and history.
func gen(dir string, n, history int) error {
	for _, d := range []string{"cat/catalog", "full/catalog", "full/rollouts"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	catPath := filepath.Join(dir, "cat/catalog/catalog.jsonl")
	p, err := writeCatalogue(catPath, n)
	if err != nil {
		return err
	}
	seq, err := writeHistory(filepath.Join(dir, "full/rollouts/history.jsonl"), p, history)
	if err != nil {
		return err
	}
	fmt.Printf("wrote %d tasks and %d rollouts under %s\n", n, seq, dir)
	return os.Link(catPath, filepath.Join(dir, "full/catalog/catalog.jsonl"))
}

// writeCatalogue writes n catalogue rows to path and returns each task's probability of
// success, which its first three words set.
func writeCatalogue(path string, n int) ([]float32, error) {
	cf, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	cw := bufio.NewWriterSize(cf, 1<<20)
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	zipf := rand.NewZipf(rng, 1.1, 3, vocab-1)
	effect := make([]float64, vocab)
	for i := range effect {
		effect[i] = rng.NormFloat64() * 0.8
	}
	p := make([]float32, n)
	words := make([]string, 0, 20)
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
		p[i] = float32(1 / (1 + math.Exp(-logit)))
		tools := make([]string, 1+rng.IntN(3))
		for k := range tools {
			tools[k] = fmt.Sprintf("e%d_tool%d", env, rng.IntN(toolsEach))
		}
		row, _ := json.Marshal(map[string]any{"env": fmt.Sprint("env-", env), "task_id": fmt.Sprintf("t%07d", i),
			"text": strings.Join(words, " "), "tools": tools})
		cw.Write(append(row, '\n'))
	}
	if err := cw.Flush(); err != nil {
		cf.Close()
		return nil, err
	}
	return p, cf.Close()
}

// writeHistory writes groups of 8 rollouts over 40 steps to path: about history rollouts, the
// groups' tasks drawn at random, or, when history is 0, one group for half of the tasks. It
// returns the number of rollouts written.
func writeHistory(path string, p []float32, history int) (int, error) {
	hf, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	hw := bufio.NewWriterSize(hf, 1<<20)
	rng := rand.New(rand.NewPCG(uint64(len(p)), 2))
	groups := history / 8
	if history == 0 {
		groups = len(p) / 2
	}
	seq := 0
	for g := range groups {
		task := rng.IntN(len(p))
		if history == 0 {
			task = 2*g + rng.IntN(2)
		}
		step := 1 + g*40/groups
		for range 8 {
			seq++
			r := 0
			if rng.Float32() < p[task] {
				r = 1
			}
			fmt.Fprintf(hw, `{"env":"env-%d","task_id":"t%07d","reward":%d,"step":%d,"group_id":"g%d","rollout_id":"h%d"}`+"\n",
				task%envs, task, r, step, g, seq)
		}
	}
	if err := hw.Flush(); err != nil {
		hf.Close()
		return 0, err
	}
	return seq, hf.Close()
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
	fmt.Printf("  %-54s %10.1f\n", name, v)
}

func (f *figures) summary(title string) {
	fmt.Printf("%s: min / median over %s\n", title, "the runs")
	for _, name := range f.names {
		xs := slices.Clone(f.vals[name])
		slices.Sort(xs)
		fmt.Printf("  %-54s min %10.1f  median %10.1f  (%d runs)\n", name, xs[0], xs[len(xs)/2], len(xs))
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

// binary is one envsched binary to measure, and the name its figures carry.
type binary struct{ name, path string }

// binaries parses -bin: a path, or NAME=PATH,NAME=PATH,...
func binaries(flag string) []binary {
	var out []binary
	for _, item := range strings.Split(flag, ",") {
		name, path, ok := strings.Cut(item, "=")
		if !ok {
			name, path = "", item
		}
		out = append(out, binary{name, path})
	}
	return out
}

// label is a figure's name for binary b.
func (b binary) label(figure string) string {
	if b.name == "" {
		return figure
	}
	return b.name + ": " + figure
}

func partSet(list string) map[string]bool {
	out := map[string]bool{}
	for _, p := range strings.Split(list, ",") {
		out[strings.TrimSpace(p)] = true
	}
	return out
}

// cached reports whether db exists and was made by the code of stamp (any, when stamp is
// empty); otherwise it removes db, to be made again.
func cached(db, stamp string) bool {
	if _, err := os.Stat(db); err != nil {
		return false
	}
	if stamp == "" {
		return true
	}
	if got, err := os.ReadFile(db + ".stamp"); err == nil && string(got) == stamp {
		return true
	}
	fmt.Printf("%s was made by other code than %s: making it again\n", db, stamp)
	os.Remove(db)
	return false
}

// ingestOnce makes db from the exchange folder dir with bin, unless cached, under nice.
func ingestOnce(bin, dir, db, stamp string) error {
	if cached(db, stamp) {
		fmt.Printf("reusing %s\n", db)
		return nil
	}
	tmp := db + ".making"
	os.Remove(tmp)
	// at the lowest priority: on a shared machine the one-off build yields to the others (it is
	// not one of the figures)
	wall, rss, err := timed("nice", "-n", "19", bin, "ingest", "--dir", dir, "--db", tmp)
	if err != nil {
		return err
	}
	fmt.Printf("ingested %s in %.1f s, peak RSS %.0f MiB\n", dir, wall.Seconds(), rss)
	if err := os.WriteFile(db+".stamp", []byte(stamp), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, db)
}

func measure(bins []binary, dir string, runs, requests int, parts map[string]bool, stamp string) error {
	var f figures
	fmt.Printf("load average at start: %s\n", loadavg())
	// the daemon's database, ingested once (by the first binary); each run works on a copy
	base := filepath.Join(dir, "full.db")
	if err := ingestOnce(bins[0].path, filepath.Join(dir, "full"), base, stamp); err != nil {
		return err
	}
	for k := range runs {
		for _, b := range bins {
			fmt.Printf("run %d %s(load average %s)\n", k+1, b.label(""), loadavg())
			if parts["ingest"] {
				db := filepath.Join(dir, fmt.Sprintf("cat-%d.db", k))
				os.Remove(db)
				wall, rss, err := timed(b.path, "ingest", "--dir", filepath.Join(dir, "cat"), "--db", db)
				if err != nil {
					return err
				}
				os.Remove(db)
				f.add(b.label("catalogue ingest + graph build s"), wall.Seconds())
				f.add(b.label("catalogue ingest peak RSS MiB"), rss)
			}
			if err := daemonRun(b, dir, base, k, requests, parts, &f); err != nil {
				return err
			}
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

// startAnswering writes the request "first" with body into the exchange folder dir, starts the
// daemon on db and waits for that request's batch file; it returns the running daemon (the
// caller stops it) and the time from start to the batch file.
func startAnswering(bin, dir, db, body string) (*daemon, time.Duration, error) {
	reqs := filepath.Join(dir, "requests")
	if err := os.MkdirAll(reqs, 0o755); err != nil {
		return nil, 0, err
	}
	if err := os.WriteFile(filepath.Join(reqs, "first.json"), []byte(body), 0o644); err != nil {
		return nil, 0, err
	}
	begin := time.Now()
	d, err := startDaemon(bin, dir, db)
	if err != nil {
		return nil, 0, err
	}
	first, err := d.wait("first", begin)
	if err != nil {
		d.stop()
		return nil, 0, err
	}
	return d, first, nil
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

// cpu is the daemon's CPU time so far (user and system) in ms, from /proc/PID/stat (10 ms
// ticks); -1 when unreadable.
func (d *daemon) cpu() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", d.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	_, rest, _ := strings.Cut(string(b), ") ") // the command name may hold spaces
	f := strings.Fields(rest)
	if len(f) < 13 {
		return -1
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) * 10
}

// memory reads the daemon's VmHWM, VmRSS, RssAnon and RssFile in MiB (missing: -1).
func (d *daemon) memory() map[string]float64 {
	out := map[string]float64{"VmHWM": -1, "VmRSS": -1, "RssAnon": -1, "RssFile": -1}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.cmd.Process.Pid))
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		key, rest, ok := strings.Cut(line, ":")
		if _, want := out[key]; ok && want {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			out[key] = kb / 1024
		}
	}
	return out
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
	// on disk before the daemon starts: its first fsync would otherwise write the whole copy
	// (seconds for a 10M-rollout database), which a daemon restarted on its own file never does
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// daemonRun is one run of the daemon on a copy of base.
func daemonRun(b binary, dir, base string, k, requests int, parts map[string]bool, f *figures) error {
	full := filepath.Join(dir, "full")
	cleanExchange(full)
	db := filepath.Join(dir, fmt.Sprintf("daemon-%d.db", k))
	if err := copyFile(db, base); err != nil {
		return err
	}
	defer os.Remove(db)
	d, first, err := startAnswering(b.path, full, db, `{"size": 512}`)
	if err != nil {
		return err
	}
	defer d.stop()
	if parts["first"] {
		f.add(b.label("first answer after start ms"), ms(first))
		f.add(b.label("the daemon's CPU until then ms"), d.cpu())
	}
	if parts["batch"] {
		if err := batches(b, d, f); err != nil {
			return err
		}
	}
	if parts["latency"] {
		if err := latency(b, d, full, k, requests, f); err != nil {
			return err
		}
	}
	mem := d.memory()
	f.add(b.label("daemon peak RSS (VmHWM) MiB"), mem["VmHWM"])
	f.add(b.label("daemon RSS at the end: anonymous MiB"), mem["RssAnon"])
	f.add(b.label("daemon RSS at the end: file pages MiB"), mem["RssFile"])
	return nil
}

// batches asks for 20 batches of 512 one after another.
func batches(b binary, d *daemon, f *figures) error {
	var b512 []float64
	cpu0 := d.cpu()
	for i := range 20 {
		lat, err := d.request(fmt.Sprintf("b512-%d", i), `{"size": 512}`)
		if err != nil {
			return err
		}
		b512 = append(b512, ms(lat))
	}
	f.add(b.label("batch of 512, request to file, median ms"), quantile(b512, 0.5))
	f.add(b.label("batch of 512, the daemon's CPU a request ms"), (d.cpu()-cpu0)/20)
	f.add(b.label("batch of 512, choose, median ms"), quantile(answered(d.log.String(), "choose_ms", "b512-"), 0.5))
	return nil
}

// latency asks for requests of the default size while a writer appends 5,000 lines/s.
func latency(b binary, d *daemon, full string, k, requests int, f *figures) error {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	written := writer(ctx, full, k, 5000)
	time.Sleep(500 * time.Millisecond)
	var lat []float64
	for i := range requests {
		l, err := d.request(fmt.Sprintf("lat-%d", i), `{}`)
		if err != nil {
			return err
		}
		lat = append(lat, ms(l))
		time.Sleep(time.Duration(5+i%20) * time.Millisecond)
	}
	stop()
	f.add(b.label("with writer 5,000 lines/s: p50 ms"), quantile(lat, 0.5))
	f.add(b.label("with writer 5,000 lines/s: p99 ms"), quantile(lat, 0.99))
	f.add(b.label("lines written meanwhile"), float64(written.Load()))
	for _, part := range []string{"barrier_ms", "choose_ms"} {
		f.add(b.label("with writer: the daemon's "+part+", median"), quantile(answered(d.log.String(), part, "lat-"), 0.5))
	}
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
func restart(bins []binary, dir string, n, runs int, stamp string) error {
	var f figures
	ex := filepath.Join(dir, "ex")
	base := filepath.Join(dir, "base.db")
	if !cached(base, stamp) {
		os.RemoveAll(ex)
		if _, err := benchdata.Write(filepath.Join(ex, "rollouts"), benchdata.Spec{Shape: benchdata.Compact, Lines: n, Files: 16, Seed: 1}); err != nil {
			return err
		}
	}
	if err := ingestOnce(bins[0].path, ex, base, stamp); err != nil {
		return err
	}
	for k := range runs {
		for _, b := range bins {
			fmt.Printf("run %d %s(load average %s)\n", k+1, b.label(""), loadavg())
			if err := restartRun(b, ex, filepath.Join(dir, "restart.db"), base, k, &f); err != nil {
				return err
			}
		}
	}
	f.summary(fmt.Sprintf("restart on %d rollouts (load average at end %s)", n, loadavg()))
	return nil
}

// restartRun starts the daemon on a copy of base with 1,000 new lines and a request waiting.
func restartRun(b binary, ex, db, base string, k int, f *figures) error {
	cleanExchange(ex)
	if err := copyFile(db, base); err != nil {
		return err
	}
	defer os.Remove(db)
	var lines strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&lines, `{"env":"env-0","task_id":"task-%d","reward":1,"step":100000,"group_id":"n%d","rollout_id":"new-%d-%d"}`+"\n", i%50, i/8, k, i)
	}
	if err := os.WriteFile(filepath.Join(ex, "rollouts", "stream-new.jsonl"), []byte(lines.String()), 0o644); err != nil {
		return err
	}
	d, first, err := startAnswering(b.path, ex, db, `{}`)
	if err != nil {
		return err
	}
	defer d.stop()
	f.add(b.label("first answer, 1,000 new lines waiting ms"), ms(first))
	f.add(b.label("the daemon's CPU until then ms"), d.cpu())
	for end := time.Now().Add(5 * time.Second); len(answered(d.log.String(), "ms", "first")) == 0 && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond) // the answered line follows the batch file
	}
	for _, part := range []string{"barrier_ms", "choose_ms"} {
		f.add(b.label("the daemon's "+part), quantile(answered(d.log.String(), part, "first"), 0.5))
	}
	f.add(b.label("daemon peak RSS (VmHWM) MiB"), d.memory()["VmHWM"])
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
