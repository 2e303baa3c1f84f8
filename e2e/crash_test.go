package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// seed returns the crash tests' seed: ENVSCHED_E2E_SEED when set, else the clock. It is logged
// so that a failure can be replayed.
func seed(t *testing.T) uint64 {
	t.Helper()
	s := uint64(time.Now().UnixNano())
	if v := os.Getenv("ENVSCHED_E2E_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		must(t, err)
		s = n
	}
	t.Logf("seed %d (replay with ENVSCHED_E2E_SEED=%d)", s, s)
	return s
}

// writer plays a trainer: it appends rollouts with unique ids to several files in chunks that
// split lines, renames a file inside DIR/rollouts now and then (and keeps appending to it under
// its new name), and drops a request every so often.
type writer struct {
	t     *testing.T
	dir   string
	rng   *rand.Rand
	files []*wfile
	ids   []string
	reqs  []string
	n     int   // lines started
	err   error // the first failure: the writer runs off the test goroutine, where t.Fatal must not be called
}

// check records the first failure; the writer stops, and the test fails with it after the
// writer's goroutine is waited for.
func (w *writer) check(err error) {
	if err != nil && w.err == nil {
		w.err = err
	}
}

type wfile struct {
	f       *os.File
	path    string
	pending []byte // bytes of lines not yet written
}

func newWriter(t *testing.T, dir string, rng *rand.Rand, nfiles int) *writer {
	w := &writer{t: t, dir: dir, rng: rng}
	must(t, os.MkdirAll(filepath.Join(dir, "rollouts", "run-a"), 0o755))
	for i := range nfiles {
		sub := "rollouts"
		if i%2 == 1 {
			sub = "rollouts/run-a"
		}
		p := filepath.Join(dir, sub, fmt.Sprintf("worker-%d.jsonl", i))
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		must(t, err)
		w.files = append(w.files, &wfile{f: f, path: p})
	}
	return w
}

// step writes a few lines' worth of bytes, cut at random places.
func (w *writer) step() {
	wf := w.files[w.rng.IntN(len(w.files))]
	for range 1 + w.rng.IntN(20) {
		id := fmt.Sprintf("r%07d", w.n)
		wf.pending = append(wf.pending, rolloutLine(id, w.n)...)
		w.ids = append(w.ids, id)
		w.n++
	}
	cut := w.rng.IntN(len(wf.pending) + 1)
	w.write(wf, cut)
	if w.rng.IntN(200) == 0 {
		w.rename(wf)
	}
	if w.rng.IntN(40) == 0 {
		id := fmt.Sprintf("req-%04d", len(w.reqs))
		w.check(tryWriteRequest(w.dir, id, `{"size": 4}`))
		w.reqs = append(w.reqs, id)
	}
}

func (w *writer) write(wf *wfile, n int) {
	if n == 0 {
		return
	}
	_, err := wf.f.Write(wf.pending[:n])
	w.check(err)
	wf.pending = wf.pending[n:]
}

// rename moves a file to a new name inside DIR/rollouts; appends go on through the open file.
func (w *writer) rename(wf *wfile) {
	dirs := []string{"rollouts", "rollouts/run-a"}
	p := filepath.Join(w.dir, dirs[w.rng.IntN(2)], fmt.Sprintf("moved-%d.jsonl", w.n))
	w.check(os.Rename(wf.path, p))
	wf.path = p
}

// finish writes every pending byte, so every line is complete.
func (w *writer) finish() {
	for _, wf := range w.files {
		w.write(wf, len(wf.pending))
		must(w.t, wf.f.Close())
	}
}

// The crash loop: the daemon is SIGKILLed at random moments while a trainer writes and asks;
// at the end every rollout is counted once, every request is answered with the answer first
// seen, no reader saw a partial batch, and no temporary file is left.
func TestCrashLoop(t *testing.T) { crashLoop(t, 20, 4) }

func crashLoop(t *testing.T, kills, nfiles int) {
	dir := t.TempDir()
	s := seed(t)
	rng := rand.New(rand.NewPCG(s, 1))                          // the kills
	w := newWriter(t, dir, rand.New(rand.NewPCG(s, 2)), nfiles) // the writer's own
	rd := newReader(dir)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { rd.run(ctx) })

	wg.Go(func() { // the writer is w's only user until wg.Wait
		for ctx.Err() == nil && w.err == nil {
			w.step()
			time.Sleep(time.Millisecond)
		}
	})
	for i := range kills {
		d := start(t, dir, opts{args: []string{"--poll=" + strconv.FormatBool(i%2 == 1)}})
		time.Sleep(time.Duration(20+rng.IntN(300)) * time.Millisecond)
		killRun(t, i, d, func() { stop(); wg.Wait() })
	}
	stop()
	wg.Wait()
	if w.err != nil {
		t.Fatalf("writer: %v", w.err)
	}
	w.finish()

	d := start(t, dir, opts{})
	writeRequest(t, dir, "final", `{}`)
	final := waitBatch(t, d, "final")
	if got := rolloutsSeen(t, final); got != int64(len(w.ids)) {
		t.Errorf("final batch saw %d rollouts; want all %d written before it", got, len(w.ids))
	}
	for _, id := range w.reqs {
		waitBatch(t, d, id)
	}
	rd.pass()
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d; want 0", code)
	}
	t.Logf("%d kills, %d rollouts, %d requests", kills, len(w.ids), len(w.reqs))
	checkAfterCrashes(t, dir, w.ids, append(w.reqs, "final"), rd)
}

// checkAfterCrashes is the end of every crash test: exactly once, statistics recomputed, every
// request answered with its stored answer, readers never saw a partial or changed batch, no
// temporary file left.
func checkAfterCrashes(t *testing.T, dir string, ids, reqs []string, rd *reader) {
	t.Helper()
	f := checkExactlyOnce(t, dir, ids)
	seen := rd.report(t)
	for _, id := range reqs {
		stored, ok := f.answers[id]
		if !ok {
			t.Errorf("request %s has no stored answer", id)
			continue
		}
		onDisk, err := os.ReadFile(filepath.Join(dir, "batches", id+".json"))
		if err != nil || !bytes.Equal(onDisk, stored) {
			t.Errorf("batch %s on disk differs from the stored answer (%v)", id, err)
		}
		if first, ok := seen[id+".json"]; ok && !bytes.Equal(first, stored) {
			t.Errorf("batch %s: the stored answer differs from the version a reader saw first", id)
		}
	}
	if left := leftovers(t, dir); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// keepLog appends a killed run's log to $ENVSCHED_E2E_LOGDIR/TEST.log when that is set, for
// reading a failure afterwards.
// killRun kills run number i of a crash loop with SIGKILL, keeps its log, and fails the test if
// the daemon had ended by itself before the kill; cleanup (stopping the loop's writers) runs
// before the test stops.
func killRun(t *testing.T, i int, d *daemon, cleanup func()) {
	t.Helper()
	d.kill()
	keepLog(t, i, d)
	if ws := d.state.Sys().(syscall.WaitStatus); !ws.Signaled() {
		cleanup()
		t.Fatalf("run %d ended by itself (code %d) before the kill\nstderr:\n%s", i,
			d.state.ExitCode(), tail(d.stderr.String(), 4000))
	}
}

func keepLog(t *testing.T, run int, d *daemon) {
	dir := os.Getenv("ENVSCHED_E2E_LOGDIR")
	if dir == "" {
		return
	}
	f, err := os.OpenFile(filepath.Join(dir, t.Name()+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Logf("keep log: %v", err)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "=== run %d\n%s", run, d.stderr.String())
}
