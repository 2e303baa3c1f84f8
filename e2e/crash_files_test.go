package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fileTrainer plays a trainer that does to its rollout files what #12 cases 1-3 found unsafe:
// it truncates and rewrites them in place, deletes and re-creates them under the same name
// (ext4 gives the new file the freed inode), moves them out of DIR/rollouts or to a dot-name
// and back, and appends to them wherever they are. Its lines carry no rollout_id, so no
// dedupe can hide a line counted twice. It never calls t.Fatal: its goroutine is not the test's.
type fileTrainer struct {
	dir   string
	rng   *rand.Rand
	files []*tfile
	n     int
	reqs  []string
	err   error // the first failure
}

// tfile is one file of the trainer: its name and where it is now, and the lines it holds.
type tfile struct {
	name  string
	where string // "rollouts", "aside" (outside rollouts/), or "dot" (rollouts/.NAME)
	tasks []string
}

func (f *tfile) path(dir string) string {
	switch f.where {
	case "aside":
		return filepath.Join(dir, "aside", f.name)
	case "dot":
		return filepath.Join(dir, "rollouts", "."+f.name)
	}
	return filepath.Join(dir, "rollouts", f.name)
}

func newFileTrainer(dir string, rng *rand.Rand, nfiles int) *fileTrainer {
	tr := &fileTrainer{dir: dir, rng: rng}
	tr.check(os.MkdirAll(filepath.Join(dir, "aside"), 0o755))
	tr.check(os.MkdirAll(filepath.Join(dir, "rollouts"), 0o755))
	for i := range nfiles {
		f := &tfile{name: fmt.Sprintf("w%d.jsonl", i), where: "rollouts"}
		tr.check(os.WriteFile(f.path(dir), nil, 0o644))
		tr.files = append(tr.files, f)
	}
	return tr
}

func (tr *fileTrainer) check(err error) {
	if err != nil && tr.err == nil {
		tr.err = err
	}
}

// lines returns k new lines (tasks L<n>) and their tasks.
func (tr *fileTrainer) lines(k int) (string, []string) {
	var b strings.Builder
	var tasks []string
	for range k {
		task := fmt.Sprintf("L%07d", tr.n)
		tr.n++
		fmt.Fprintf(&b, `{"env":"env-0","note":"%s","reward":1,"task_id":"%s"}`+"\n", strings.Repeat("n", 60), task)
		tasks = append(tasks, task)
	}
	return b.String(), tasks
}

func (tr *fileTrainer) step() {
	f := tr.files[tr.rng.IntN(len(tr.files))]
	switch k := tr.rng.IntN(20); {
	case k < 12:
		text, tasks := tr.lines(1 + tr.rng.IntN(20))
		tr.check(appendTo(f.path(tr.dir), text))
		f.tasks = append(f.tasks, tasks...)
	case k < 14: // case 1: truncated and rewritten at once, the first bytes alike, mostly longer
		text, tasks := tr.lines(tr.longer(f))
		tr.check(os.WriteFile(f.path(tr.dir), []byte(text), 0o644))
		f.tasks = tasks
	case k < 16: // case 2: deleted and made again under the same name, mostly longer
		text, tasks := tr.lines(tr.longer(f))
		tr.check(os.Remove(f.path(tr.dir)))
		tr.check(os.WriteFile(f.path(tr.dir), []byte(text), 0o644))
		f.tasks = tasks
	case k < 18: // case 3: moved out of rollouts/ or to a dot-name, or back
		tr.move(f)
	case k < 19:
		id := fmt.Sprintf("req-%04d", len(tr.reqs))
		tr.check(writeRequestErr(tr.dir, id, `{"size": 4}`))
		tr.reqs = append(tr.reqs, id)
	}
}

// longer is how many lines a rewrite of f writes: more than f holds (a rewrite that is not
// shorter than what was read is the one a size check cannot see), unless f is long already.
func (tr *fileTrainer) longer(f *tfile) int {
	if n := len(f.tasks) + 1 + tr.rng.IntN(40); n <= 300 {
		return n
	}
	return 1 + tr.rng.IntN(40)
}

// move takes a file in rollouts/ out (aside or to a dot-name), and one out back in.
func (tr *fileTrainer) move(f *tfile) {
	from := f.path(tr.dir)
	switch {
	case f.where != "rollouts":
		f.where = "rollouts"
	case tr.rng.IntN(2) == 0:
		f.where = "aside"
	default:
		f.where = "dot"
	}
	tr.check(os.Rename(from, f.path(tr.dir)))
}

// finish moves every file back into rollouts/ and returns the tasks the files hold: each must
// be stored exactly once.
func (tr *fileTrainer) finish() []string {
	var all []string
	for _, f := range tr.files {
		if f.where != "rollouts" {
			tr.move(f)
		}
		all = append(all, f.tasks...)
	}
	return all
}

func appendTo(path, text string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeRequestErr is writeRequest for a goroutine that must not call t.Fatal.
func writeRequestErr(dir, id, body string) error {
	tmp := filepath.Join(dir, "requests", "."+id+".json.tmp")
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, "requests", id+".json"))
}

// TestCrashLoopFileChanges is the crash loop with the file changes of #12 cases 1-3: the
// daemon is SIGKILLed at random moments (in both watch modes) while the trainer rewrites,
// re-creates and moves its files; at the end every line the files hold is stored exactly once,
// no line is stored twice, and nothing was stored that was never written.
func TestCrashLoopFileChanges(t *testing.T) { crashLoopFiles(t, 12, 4) }

func crashLoopFiles(t *testing.T, kills, nfiles int) {
	dir := t.TempDir()
	s := seed(t)
	rng := rand.New(rand.NewPCG(s, 3))
	tr := newFileTrainer(dir, rand.New(rand.NewPCG(s, 4)), nfiles)
	must(t, os.MkdirAll(filepath.Join(dir, "requests"), 0o755))
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { // the trainer is tr's only user until wg.Wait
		for ctx.Err() == nil && tr.err == nil {
			tr.step()
			time.Sleep(3 * time.Millisecond) // slow enough for the daemon to read between changes
		}
	})
	for i := range kills {
		d := start(t, dir, opts{args: []string{"--poll=" + strconv.FormatBool(i%2 == 1)}})
		time.Sleep(time.Duration(20+rng.IntN(300)) * time.Millisecond)
		killRun(t, i, d, func() { stop(); wg.Wait() })
	}
	stop()
	wg.Wait()
	if tr.err != nil {
		t.Fatalf("trainer: %v", tr.err)
	}
	want := tr.finish()
	if tr.err != nil {
		t.Fatalf("trainer: %v", tr.err)
	}

	d := start(t, dir, opts{})
	if got := barrier(t, d, "final"); got < int64(len(want)) {
		t.Errorf("final batch saw %d rollouts; want at least the %d the files hold", got, len(want))
	}
	for _, id := range tr.reqs {
		waitBatch(t, d, id)
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d; want 0", code)
	}
	t.Logf("%d kills, %d lines written, %d in the files at the end, %d requests", kills, tr.n, len(want), len(tr.reqs))
	checkFileLines(t, dir, want, tr.n)
}

// checkFileLines checks the end of a crash loop with file changes: each task the files hold is
// stored once, no task twice, and only tasks that were written (L0000000 .. L<written-1>).
func checkFileLines(t *testing.T, dir string, want []string, written int) {
	t.Helper()
	counts, check := taskCounts(t, dir)
	if check != nil {
		t.Errorf("database check: %v", check)
	}
	bad := 0
	for _, task := range want {
		if counts[task] != 1 {
			if bad < 5 {
				t.Errorf("line %s, still in a file, stored %d times; want once", task, counts[task])
			}
			bad++
		}
	}
	for task, n := range counts {
		var i int
		if _, err := fmt.Sscanf(task, "L%d", &i); err != nil || i >= written || n != 1 {
			if bad < 10 {
				t.Errorf("task %s stored %d times; want once, and only lines written", task, n)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d faults", bad)
	}
}
