package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// harness runs a Watcher over DIR/rollouts and DIR/requests and gathers what it reports.
type harness struct {
	t      *testing.T
	dir    string
	w      *Watcher
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	seen     map[string]int
	rescans  []string
	rescanAt []time.Time // when each rescan was received
	signal   chan struct{}
}

func start(t *testing.T, opts Options) *harness {
	t.Helper()
	dir := t.TempDir()
	for _, sub := range []string{"rollouts", "requests"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return startIn(t, dir, opts)
}

func startIn(t *testing.T, dir string, opts Options) *harness {
	t.Helper()
	opts.Roots = []string{filepath.Join(dir, "rollouts"), filepath.Join(dir, "requests")}
	if opts.PollInterval == 0 {
		opts.PollInterval = 20 * time.Millisecond
	}
	w, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, dir: dir, w: w, cancel: cancel, done: make(chan struct{}),
		seen: map[string]int{}, signal: make(chan struct{}, 1)}
	go h.consume(ctx)
	t.Cleanup(h.stop)
	return h
}

func (h *harness) consume(ctx context.Context) {
	runDone := make(chan struct{})
	go func() { h.w.Run(ctx); close(runDone) }()
	defer close(h.done)
	defer func() { <-runDone }()
	for {
		select {
		case <-ctx.Done():
			return
		case c := <-h.w.Changes():
			h.record(c)
		}
	}
}

func (h *harness) record(c Change) {
	h.mu.Lock()
	for _, p := range c.Paths {
		h.seen[p]++
	}
	if c.Rescan {
		h.rescans = append(h.rescans, c.Reason)
		h.rescanAt = append(h.rescanAt, time.Now())
	}
	h.mu.Unlock()
	select {
	case h.signal <- struct{}{}:
	default:
	}
}

func (h *harness) stop() {
	h.cancel()
	<-h.done
	h.w.Close()
}

// path returns DIR/rel.
func (h *harness) path(rel string) string { return filepath.Join(h.dir, rel) }

// waitFor waits until cond holds over what was reported; the deadline only turns a hang into a
// failure with a message.
func (h *harness) waitFor(what string, cond func(seen map[string]int, rescans []string) bool) {
	h.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		h.mu.Lock()
		ok := cond(h.seen, h.rescans)
		h.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-h.signal:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			h.mu.Lock()
			seen := fmt.Sprint(h.seen)
			if len(h.seen) > 20 {
				seen = fmt.Sprintf("%d paths", len(h.seen))
			}
			h.mu.Unlock()
			h.t.Fatalf("never reported: %s (seen %s)", what, seen)
		}
	}
}

func (h *harness) waitPaths(paths ...string) {
	h.t.Helper()
	h.waitFor("paths", func(seen map[string]int, _ []string) bool {
		for _, p := range paths {
			if seen[p] == 0 {
				return false
			}
		}
		return true
	})
}

// reset forgets what was reported so far.
func (h *harness) reset() {
	h.mu.Lock()
	h.seen = map[string]int{}
	h.rescans = nil
	h.mu.Unlock()
}

func (h *harness) count(p string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seen[p]
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendTo(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

// modes runs a test once with polling alone and once with fsnotify (the slow safety poll then
// cannot be what reports the change within the test).
var modes = []struct {
	name string
	opts Options
	want Mode
}{
	{"poll", Options{Poll: true}, ModePoll},
	{"notify", Options{SafetyInterval: time.Hour}, ModeNotify},
}

func TestReportsChanges(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			h := start(t, m.opts)
			if got := h.w.Mode(); got != m.want {
				t.Fatalf("mode %s, want %s", got, m.want)
			}
			a := h.path("rollouts/a.jsonl")
			write(t, a, `{"x":1}`+"\n")
			h.waitPaths(a)

			h.reset()
			appendTo(t, a, `{"x":2}`+"\n")
			h.waitPaths(a)

			h.reset()
			b := h.path("rollouts/b.jsonl")
			if err := os.Rename(a, b); err != nil {
				t.Fatal(err)
			}
			h.waitPaths(a, b)

			h.reset()
			if err := os.Remove(b); err != nil {
				t.Fatal(err)
			}
			h.waitPaths(b)
		})
	}
}

func TestNewSubfoldersAreWatched(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			h := start(t, m.opts)
			// A folder tree made in one go: files may exist before any watch on the folder.
			deep := h.path("rollouts/run1/worker-3/part.jsonl")
			write(t, deep, "line\n")
			h.waitPaths(deep)

			h.reset()
			appendTo(t, deep, "more\n")
			h.waitPaths(deep)

			h.reset()
			later := h.path("rollouts/run1/worker-3/later.jsonl")
			write(t, later, "x\n")
			h.waitPaths(later)
		})
	}
}

// A burst of files into folders made during the burst: every file is reported, though the
// folders are created (and their first files written) before their watches are in place, and
// the writer goes on while the new folders are being listed.
func TestBurstIntoNewFolders(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			h := start(t, m.opts)
			const n, folders = 4000, 40
			paths := make([]string, n)
			for i := range n {
				paths[i] = h.path(fmt.Sprintf("rollouts/burst/d%02d/f%05d.jsonl", i%folders, i))
				if i < folders {
					must(t, os.MkdirAll(filepath.Dir(paths[i]), 0o755))
				}
				write(t, paths[i], "x\n")
			}
			h.waitPaths(paths...)
		})
	}
}

func TestRequestsAreReported(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			h := start(t, m.opts)
			// The protocol's way: write a dot temp file, then rename it into place.
			tmp := h.path("requests/.step-1.json.tmp")
			final := h.path("requests/step-1.json")
			write(t, tmp, `{"size":4}`)
			if err := os.Rename(tmp, final); err != nil {
				t.Fatal(err)
			}
			h.waitPaths(final)
			if n := h.count(tmp); n != 0 {
				t.Errorf("temp file reported %d times; names starting with a dot are unfinished writes", n)
			}
		})
	}
}

// TestIgnoresUnfinishedAndLinkedFolders: unfinished names are never reported; a symbolic link
// is reported as itself, by both modes alike (the consumer refuses it: no link is ever read),
// and a linked folder is never entered.
func TestIgnoresUnfinishedAndLinkedFolders(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			outside := t.TempDir()
			write(t, filepath.Join(outside, "secret.jsonl"), "s\n")
			if err := os.MkdirAll(filepath.Join(outside, "dir"), 0o755); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(outside, "dir", "inner.jsonl"), "i\n")

			h := start(t, m.opts)
			inside := h.path("rollouts/real.jsonl")
			write(t, inside, "r\n")
			ignoredNames := []string{
				h.path("rollouts/.hidden.jsonl"),
				h.path("rollouts/part.jsonl.tmp"),
				h.path("rollouts/.cache/x.jsonl"),
			}
			for _, p := range ignoredNames {
				write(t, p, "x\n")
			}
			linkOut := h.path("rollouts/out.jsonl")
			linkDir := h.path("rollouts/outdir")
			linkIn := h.path("rollouts/in.jsonl")
			must(t, os.Symlink(filepath.Join(outside, "secret.jsonl"), linkOut))
			must(t, os.Symlink(filepath.Join(outside, "dir"), linkDir))
			must(t, os.Symlink(inside, linkIn))
			marker := h.path("rollouts/zz-last.jsonl")
			write(t, marker, "m\n")
			h.waitPaths(inside, marker, linkIn, linkOut)

			// Poll once more so that anything the poll would report has been reported.
			h.reset()
			write(t, marker, "m2\n")
			h.waitPaths(marker)
			for _, p := range append(ignoredNames, linkDir+"/inner.jsonl") {
				if n := h.count(p); n != 0 {
					t.Errorf("%s reported %d times; want never", p, n)
				}
			}
			// Pointing a link elsewhere is a change of the link, reported as such.
			h.reset()
			must(t, os.Remove(linkOut))
			must(t, os.Symlink(filepath.Join(outside, "dir", "inner.jsonl"), linkOut))
			h.waitPaths(linkOut)
		})
	}
}

func TestOverflowAsksForRescan(t *testing.T) {
	h := start(t, Options{SafetyInterval: time.Hour})
	h.w.InjectOverflow()
	h.waitFor("rescan", func(_ map[string]int, r []string) bool { return len(r) > 0 })
}

func TestInjectedOverflowEveryNEvents(t *testing.T) {
	// Every third event is lost to a simulated overflow: the rescan that follows must still
	// bring every file to the consumer's attention (as a changed path or under the rescan).
	h := start(t, Options{SafetyInterval: time.Hour, OverflowEvery: 3})
	if h.w.Mode() != ModeNotify {
		t.Skip("fsnotify unavailable here")
	}
	written := map[string]time.Time{}
	for i := range 20 {
		p := h.path(filepath.Join("rollouts", "f"+string(rune('a'+i))+".jsonl"))
		write(t, p, "x\n")
		written[p] = time.Now()
	}
	// Each file is reported as a path, or a rescan (the consumer looks at every file when it
	// receives one) was received after the file was written. Waiting for one rescan was not
	// enough: it may have come before most files.
	h.waitFor("every file, as a path or under a later rescan", func(seen map[string]int, _ []string) bool {
		for p, at := range written {
			if seen[p] == 0 && !slices.ContainsFunc(h.rescanAt, at.Before) {
				return false
			}
		}
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.rescans) == 0 {
		t.Fatal("no rescan: the injected overflow was never exercised")
	}
}

func TestMissingRootIsAnError(t *testing.T) {
	dir := t.TempDir()
	_, err := New(Options{Roots: []string{filepath.Join(dir, "missing")}})
	if err == nil {
		t.Fatal("New over a missing root succeeded; want an error naming it")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestFallsBackToPollingWhenNotifyCannotStart(t *testing.T) {
	h := start(t, Options{notifyErr: errors.New("too many open files"), SafetyInterval: time.Hour})
	if got := h.w.Mode(); got != ModePoll {
		t.Fatalf("mode %s after fsnotify failed to start; want poll", got)
	}
	a := h.path("rollouts/a.jsonl")
	write(t, a, "x\n")
	h.waitPaths(a)
}

// A folder deleted and made again while events are lost looks unchanged to a listing, but its
// watch is gone: the rescan that follows the loss must watch it again.
func TestRescanWatchesARecreatedFolderAgain(t *testing.T) {
	root := t.TempDir()
	d := filepath.Join(root, "d")
	must(t, os.Mkdir(d, 0o755))
	w, err := New(Options{Roots: []string{root}, SafetyInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.Mode() != ModeNotify {
		t.Skip("fsnotify cannot start here")
	}
	must(t, os.Remove(d))
	must(t, os.Mkdir(d, 0o755))
	deadline := time.Now().Add(10 * time.Second)
	for slices.Contains(w.fsw.WatchList(), d) { // fsnotify drops the removed folder's watch
		if time.Now().After(deadline) {
			t.Fatal("fsnotify kept the watch of a removed folder")
		}
		time.Sleep(5 * time.Millisecond)
	}
	var dirty pending
	w.poll(&dirty) // what a rescan after lost events does
	if !slices.Contains(w.fsw.WatchList(), d) {
		t.Errorf("recreated folder %s not watched after the rescan; watched: %v", d, w.fsw.WatchList())
	}
}

// urgentRequest is an Options.Urgent that picks request files named *.json.
func urgentRequest(path string) bool {
	return filepath.Base(filepath.Dir(path)) == "requests" && filepath.Ext(path) == ".json"
}

// rename writes data as DIR/rel through a temporary file, as a trainer writes a request.
func (h *harness) rename(rel, data string) {
	h.t.Helper()
	tmp := h.path(filepath.Join(filepath.Dir(rel), "."+filepath.Base(rel)+".tmp"))
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Rename(tmp, h.path(rel)); err != nil {
		h.t.Fatal(err)
	}
}

// An urgent file is delivered without waiting for the debounce, and takes the hints gathered
// before it along: with a debounce of an hour only the urgent flush can deliver them.
func TestUrgentFileSkipsTheDebounce(t *testing.T) {
	for _, how := range []string{"renamed", "created"} {
		t.Run(how, func(t *testing.T) {
			h := start(t, Options{Debounce: time.Hour, SafetyInterval: time.Hour, Urgent: urgentRequest})
			if h.w.Mode() != ModeNotify {
				t.Skip("fsnotify unavailable here")
			}
			write(t, h.path("rollouts/a.jsonl"), "{}\n")
			if how == "renamed" {
				h.rename("requests/r.json", "{}")
			} else {
				write(t, h.path("requests/r.json"), "{}")
			}
			h.waitPaths(h.path("rollouts/a.jsonl"), h.path("requests/r.json"))
		})
	}
}

// After an urgent flush the debounce works again: a later data file is delivered by it (with
// the safety poll an hour away, a debounce left disarmed would never deliver it).
func TestDebounceRearmsAfterUrgentFlush(t *testing.T) {
	h := start(t, Options{SafetyInterval: time.Hour, Urgent: urgentRequest})
	if h.w.Mode() != ModeNotify {
		t.Skip("fsnotify unavailable here")
	}
	write(t, h.path("rollouts/a.jsonl"), "{}\n")
	h.rename("requests/r.json", "{}")
	h.waitPaths(h.path("requests/r.json"))
	write(t, h.path("rollouts/b.jsonl"), "{}\n")
	h.waitPaths(h.path("rollouts/b.jsonl"))
}

// Urgent is asked only about Create events: writing into a file it would pick, or removing
// one, waits for the debounce like any other hint.
func TestUrgentAskedOnlyForCreatedFiles(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	urgent := func(p string) bool {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, filepath.Base(p))
		return false
	}
	h := start(t, Options{SafetyInterval: time.Hour, Urgent: urgent})
	if h.w.Mode() != ModeNotify {
		t.Skip("fsnotify unavailable here")
	}
	h.rename("requests/r.json", "{}")
	h.waitPaths(h.path("requests/r.json"))
	f, err := os.OpenFile(h.path("requests/r.json"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(" ")
	f.Close()
	os.Remove(h.path("requests/r.json"))
	write(t, h.path("rollouts/z.jsonl"), "{}\n") // delivered after the two above: its hint comes last
	h.waitPaths(h.path("rollouts/z.jsonl"))
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(asked, []string{"r.json", "z.jsonl"}) {
		t.Fatalf("Urgent asked about %q, want the two created files only", asked)
	}
}
