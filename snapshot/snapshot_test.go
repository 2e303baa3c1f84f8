package snapshot_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/snapshot"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// commitStep stores one group of four rollouts per task for step s.
func commitStep(t testing.TB, db *storage.DB, s int64) {
	t.Helper()
	if err := tryCommitStep(db, s); err != nil {
		t.Fatal(err)
	}
}

// tryCommitStep is commitStep for goroutines other than the test's: it returns the error.
func tryCommitStep(db *storage.DB, s int64) error {
	b := &storage.Batch{}
	for task := range 5 {
		for i := range 4 {
			b.Rollouts = append(b.Rollouts, storage.Rollout{Rollout: record.Rollout{
				Env: "env", Task: fmt.Sprint(task), Reward: float64((i + task + int(s)) % 2), Step: s, HasStep: true,
				RolloutID: fmt.Sprintf("%d-%d-%d", s, task, i)}})
		}
	}
	_, err := db.Commit(b)
	return err
}

// held opens a writable database in a fresh exchange directory and keeps it open (locked).
func held(t *testing.T) (dir, path string, db *storage.DB) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, "envsched.db")
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	commitStep(t, db, 1)
	return dir, path, db
}

// serve runs the daemon side until the test ends.
func serve(t *testing.T, src snapshot.Source, dir string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := snapshot.Serve(ctx, src, dir, snapshot.ServeOptions{PollInterval: 10 * time.Millisecond}); err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	// Serve creates the folder first: wait for it so that Open does not fail fast. The
	// deadline only keeps a broken Serve from hanging the test.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, err := os.Stat(snapshot.Dir(dir)); err == nil {
			return
		}
	}
	t.Fatal("Serve did not create the snapshot folder")
}

func TestOpenDirectWhenFree(t *testing.T) {
	dir, path, db := held(t)
	db.Close()
	r, err := snapshot.Open(context.Background(), dir, path, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Snapshot {
		t.Fatal("a free database was read through a snapshot")
	}
	if c, _ := r.Counters(); c.Rollouts != 20 {
		t.Fatalf("rollouts %d, want 20", c.Rollouts)
	}
}

// TestOpenFreeReleasesTheLock reads a free database through a private copy: a daemon starting
// while the reader is still open gets the lock; with Direct it does not.
func TestOpenFreeReleasesTheLock(t *testing.T) {
	dir, path, db := held(t)
	db.Close()
	want := int64(20)
	for _, direct := range []bool{false, true} {
		r, err := snapshot.Open(context.Background(), dir, path, snapshot.Options{Direct: direct})
		if err != nil {
			t.Fatal(err)
		}
		w, err := storage.Open(path, storage.Options{Timeout: 50 * time.Millisecond})
		if direct != errors.Is(err, storage.ErrLocked) {
			t.Fatalf("direct %v: writer open: %v", direct, err)
		}
		if c, _ := r.Counters(); c.Rollouts != want {
			t.Fatalf("direct %v: reader sees %d rollouts, want %d", direct, c.Rollouts, want)
		}
		if err == nil {
			commitStep(t, w, 2)
			w.Close()
			if c, _ := r.Counters(); c.Rollouts != want {
				t.Fatalf("reader's copy changed to %d rollouts", c.Rollouts)
			}
			want += 20
		}
		storagetest.MustCheck(t, r.DB, "")
		r.Close()
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Fatalf("copies left beside the database: %v", left)
	}
}

// TestSnapshotWhileWriting takes snapshots while another goroutine keeps committing: each copy
// passes the full check, and its counts are a state the writer went through.
func TestSnapshotWhileWriting(t *testing.T) {
	dir, path, db := held(t)
	serve(t, db, dir)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var werr error // the writer's failure, reported on the test goroutine (t.Fatal must not run off it)
	wg.Go(func() {
		for s := int64(2); werr == nil; s++ {
			select {
			case <-stop:
				return
			default:
				werr = tryCommitStep(db, s)
			}
		}
	})
	defer func() {
		close(stop)
		wg.Wait()
		if werr != nil {
			t.Fatalf("writer: %v", werr)
		}
	}()
	for range 5 {
		r, err := snapshot.Open(context.Background(), dir, path, snapshot.Options{PollInterval: 5 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Snapshot || r.Source != path {
			t.Fatalf("snapshot %v source %s", r.Snapshot, r.Source)
		}
		c, _ := r.Counters()
		if c.Rollouts < 20 || c.Rollouts%20 != 0 {
			t.Fatalf("snapshot holds %d rollouts: not a committed state", c.Rollouts)
		}
		storagetest.MustCheck(t, r.DB, "")
		r.Close()
	}
	if left, _ := os.ReadDir(snapshot.Dir(dir)); len(left) != 0 {
		t.Fatalf("files left in the snapshot folder: %v", left)
	}
}

func TestHeldWithoutServer(t *testing.T) {
	dir, path, _ := held(t)
	_, err := snapshot.Open(context.Background(), dir, path, snapshot.Options{})
	if !errors.Is(err, snapshot.ErrNoServer) || !errors.Is(err, storage.ErrLocked) {
		t.Fatalf("no snapshot folder: %v", err)
	}
	if err := os.Mkdir(snapshot.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = snapshot.Open(context.Background(), dir, path, snapshot.Options{Wait: 50 * time.Millisecond})
	if !errors.Is(err, snapshot.ErrNoServer) || !errors.Is(err, storage.ErrLocked) {
		t.Fatalf("no server: %v", err)
	}
	if left, _ := os.ReadDir(snapshot.Dir(dir)); len(left) != 0 {
		t.Fatalf("unanswered request left behind: %v", left)
	}
}

// failing is a source whose copy fails, like a full disk.
type failing struct{}

func (failing) WriteSnapshot(io.Writer) (int64, error) {
	return 0, errors.New("no space left on device")
}

func TestServerFailureIsReported(t *testing.T) {
	dir, path, _ := held(t)
	serve(t, failing{}, dir)
	_, err := snapshot.Open(context.Background(), dir, path, snapshot.Options{})
	if !errors.Is(err, snapshot.ErrFailed) {
		t.Fatalf("error %v, want ErrFailed", err)
	}
	if left, _ := os.ReadDir(snapshot.Dir(dir)); len(left) != 0 {
		t.Fatalf("files left in the snapshot folder: %v", left)
	}
}

func TestServeSweepsLeftovers(t *testing.T) {
	dir := t.TempDir()
	folder := snapshot.Dir(dir)
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	old, fresh := filepath.Join(folder, "dead.db"), filepath.Join(folder, "other.txt")
	for _, p := range []string{old, fresh} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-time.Hour)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // one pass, then stop
	if err := snapshot.Serve(ctx, failing{}, dir, snapshot.ServeOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stale copy not removed: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatalf("recent file removed: %v", err)
	}
}

func TestServeRefusesLink(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink(t.TempDir(), snapshot.Dir(dir)); err != nil {
		t.Fatal(err)
	}
	if err := snapshot.Serve(context.Background(), failing{}, dir, snapshot.ServeOptions{}); err == nil {
		t.Fatal("Serve accepted a symbolic link as its folder")
	}
}

// TestOrphansOfDeadReadersGoAtTheNextSnapshot: the request and the whole copy of a reader killed
// while it waited stayed in DIR/snapshots for 15 minutes; now the daemon removes them before it
// writes the next copy. Files of live readers stay.
func TestOrphansOfDeadReadersGoAtTheNextSnapshot(t *testing.T) {
	dir, path, db := held(t)
	folder := snapshot.Dir(dir)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	dead := deadPID(t)
	orphans := []string{fmt.Sprintf("r%d-aa.db", dead), fmt.Sprintf("r%d-bb.want", dead),
		fmt.Sprintf("r%d-cc.error", dead), fmt.Sprintf(".r%d-dd.want.tmp-0123", dead)}
	live := []string{"r1-ee.db", "notes.txt"} // pid 1 lives; other shapes wait for MaxAge
	for _, name := range append(append([]string{}, orphans...), live...) {
		if err := os.WriteFile(filepath.Join(folder, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	serve(t, db, dir)
	r, err := snapshot.Open(context.Background(), dir, path, snapshot.Options{Wait: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	for _, name := range orphans {
		if _, err := os.Stat(filepath.Join(folder, name)); err == nil {
			t.Errorf("%s of dead reader %d is still there", name, dead)
		}
	}
	for _, name := range live {
		if _, err := os.Stat(filepath.Join(folder, name)); err != nil {
			t.Errorf("%s was removed: %v", name, err)
		}
	}
}

// deadPID returns the id of a process that has ended.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestNothingLeftWhenTheAnswerComesFirst stands in for a daemon paused between publishing its
// answer and removing the request (the daemon renames NAME.db or writes NAME.error first, then
// removes NAME.want): the reader must not leave its request behind when it returns.
func TestNothingLeftWhenTheAnswerComesFirst(t *testing.T) {
	for _, answer := range []string{".db", ".error"} {
		t.Run(answer, func(t *testing.T) {
			dir, path, _ := held(t)
			folder := snapshot.Dir(dir)
			if err := os.Mkdir(folder, 0o755); err != nil {
				t.Fatal(err)
			}
			copyOf, err := os.ReadFile(path) // no writer runs: the file is a committed state
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var wg sync.WaitGroup
			defer wg.Wait()
			defer cancel()
			wg.Go(func() { answerWithoutRemoving(ctx, t, folder, answer, copyOf) })
			r, err := snapshot.Open(ctx, dir, path, snapshot.Options{PollInterval: 2 * time.Millisecond, Wait: 30 * time.Second})
			switch answer {
			case ".db":
				if err != nil {
					t.Fatal(err)
				}
				r.Close()
			case ".error":
				if !errors.Is(err, snapshot.ErrFailed) {
					t.Fatalf("error answer: %v", err)
				}
			}
			if left, _ := os.ReadDir(folder); len(left) != 0 {
				t.Fatalf("files left in the snapshot folder: %v", left)
			}
		})
	}
}

// answerWithoutRemoving answers the first NAME.want in folder with NAME+answer and leaves the
// request where it is.
func answerWithoutRemoving(ctx context.Context, t *testing.T, folder, answer string, db []byte) {
	for ctx.Err() == nil {
		entries, _ := os.ReadDir(folder)
		for _, e := range entries {
			name, ok := strings.CutSuffix(e.Name(), ".want")
			if !ok {
				continue
			}
			body := []byte("the copy failed\n")
			if answer == ".db" {
				body = db
			}
			tmp := filepath.Join(folder, ".tmp-"+name)
			if err := os.WriteFile(tmp, body, 0o600); err != nil {
				t.Error(err)
				return
			}
			if err := os.Rename(tmp, filepath.Join(folder, name+answer)); err != nil {
				t.Error(err)
			}
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// logLines is a logger into a buffer, and the buffer, for tests that count log lines.
func logLines() (*slog.Logger, *lockedLog) {
	b := &lockedLog{}
	return slog.New(slog.NewTextHandler(b, nil)), b
}

type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serveWith runs Serve with opts until the test ends and waits for its folder.
func serveWith(t *testing.T, src snapshot.Source, dir string, opts snapshot.ServeOptions) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := snapshot.Serve(ctx, src, dir, opts); err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, err := os.Stat(snapshot.Dir(dir)); err == nil {
			return
		}
	}
	t.Fatal("Serve did not create the snapshot folder")
}

// TestServeMakesTheFolderAgain: DIR/snapshots removed while the daemon serves is made again, so
// the reading commands get their copies (they failed, saying no snapshot server ran, until the
// daemon restarted), and the removal is logged once (a warning every poll before: ten lines a
// second).
func TestServeMakesTheFolderAgain(t *testing.T) {
	dir, path, db := held(t)
	logger, logs := logLines()
	serveWith(t, db, dir, snapshot.ServeOptions{PollInterval: 10 * time.Millisecond, Logger: logger})
	if err := os.RemoveAll(snapshot.Dir(dir)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // thirty passes
	r, err := snapshot.Open(context.Background(), dir, path, snapshot.Options{Wait: 30 * time.Second})
	if err != nil {
		t.Fatalf("open after the folder was removed: %v", err)
	}
	r.Close()
	if n := strings.Count(logs.String(), "level=WARN"); n > 1 {
		t.Errorf("%d warnings after one removal; want 1:\n%s", n, logs.String())
	}
}

// TestServeNeverFollowsALinkSwappedIn: DIR/snapshots replaced, while the daemon serves, by a
// symbolic link to another folder: the daemon neither writes a copy there (a request file
// there is not answered) nor sweeps it (its old files and files named like a dead reader's stay;
// the sweep removed them before), and says so once. Made a folder again, it serves again.
func TestServeNeverFollowsALinkSwappedIn(t *testing.T) {
	dir, path, db := held(t)
	logger, logs := logLines()
	serveWith(t, db, dir, snapshot.ServeOptions{PollInterval: 10 * time.Millisecond, SweepInterval: 10 * time.Millisecond,
		MaxAge: time.Minute, Logger: logger})
	elsewhere := t.TempDir()
	victims := []string{"precious.txt", fmt.Sprintf("r%d-aa.db", deadPID(t))}
	for _, name := range victims {
		p := filepath.Join(elsewhere, name)
		if err := os.WriteFile(p, []byte("keep me"), 0o644); err != nil {
			t.Fatal(err)
		}
		long := time.Now().Add(-time.Hour)
		if err := os.Chtimes(p, long, long); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(elsewhere, "x.want"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	swapIn(t, snapshot.Dir(dir), elsewhere)
	time.Sleep(300 * time.Millisecond) // thirty passes and sweeps
	for _, name := range append(victims, "x.want") {
		if _, err := os.Stat(filepath.Join(elsewhere, name)); err != nil {
			t.Errorf("%s in the folder the link leads to: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "x.db")); err == nil {
		t.Error("a copy of the database was written through the link")
	}
	if n := strings.Count(logs.String(), "snapshot folder unusable"); n != 1 {
		t.Errorf("%d log lines saying the folder is unusable; want 1:\n%s", n, logs.String())
	}
	if err := os.Remove(snapshot.Dir(dir)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if fi, err := os.Lstat(snapshot.Dir(dir)); err == nil && fi.IsDir() {
			break
		}
	}
	r, err := snapshot.Open(context.Background(), dir, path, snapshot.Options{Wait: 30 * time.Second})
	if err != nil {
		t.Fatalf("open once the link is gone: %v", err)
	}
	r.Close()
}

// swapIn replaces the folder at path by a symbolic link to target. The daemon makes a removed
// folder again within a pass, so the link may find the folder back: it then tries again.
func swapIn(t *testing.T, path, target string) {
	t.Helper()
	for try := 0; ; try++ {
		if err := os.RemoveAll(path); err != nil {
			t.Fatal(err)
		}
		err := os.Symlink(target, path)
		if err == nil {
			return
		}
		if !errors.Is(err, fs.ErrExist) || try == 100 {
			t.Fatal(err)
		}
	}
}

// TestServeLetsFewCopiesWait: a flood of requests nobody reads (a thousand NAME.want files put
// in the folder) gets at most MaxWaiting whole copies of the database; the others are answered
// with an error file saying why, and every request is removed. Before, each got a copy, enough
// to fill the disk, after which the daemon stopped on its own writes. Once readers take their
// copies, requests get copies again.
func TestServeLetsFewCopiesWait(t *testing.T) {
	dir, _, db := held(t)
	folder := snapshot.Dir(dir)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	want := func(names ...string) {
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(folder, n+".want"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var flood []string
	for i := range 40 {
		flood = append(flood, fmt.Sprintf("flood%02d", i))
	}
	want(flood...)
	onePass := func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // one pass, then stop
		if err := snapshot.Serve(ctx, db, dir, snapshot.ServeOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	onePass() // MaxWaiting copies written, the other requests wait while they may be taken
	onePass() // nobody took them (a new server did not write them: stale at once): refused
	count := func(suffix string) []string {
		m, err := filepath.Glob(filepath.Join(folder, "*"+suffix))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if n := len(count(".db")); n != snapshot.MaxWaiting {
		t.Errorf("%d copies written for 40 requests nobody reads; want %d", n, snapshot.MaxWaiting)
	}
	errs := count(".error")
	if len(errs) != 40-snapshot.MaxWaiting {
		t.Errorf("%d error files; want %d", len(errs), 40-snapshot.MaxWaiting)
	} else if msg, err := os.ReadFile(errs[0]); err != nil || !strings.Contains(string(msg), "not yet taken") {
		t.Errorf("error file says %q (%v)", msg, err)
	}
	if left := count(".want"); len(left) != 0 {
		t.Errorf("requests left: %v", left)
	}
	for _, p := range count(".db") { // the readers take their copies
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	want("late")
	onePass()
	if _, err := os.Stat(filepath.Join(folder, "late.db")); err != nil {
		t.Errorf("a request after the copies were taken got no copy: %v", err)
	}
}

// TestServeLetsManyReadersWait: more readers at once than MaxWaiting all get their copies. A
// reader takes its copy as soon as it sees it; while the MaxWaiting copies written are being
// taken, the other requests wait for a later pass. They were refused at once: of sixteen
// `envsched stats` started together, seven exited 1 ("8 copies of the database wait").
func TestServeLetsManyReadersWait(t *testing.T) {
	dir, _, db := held(t)
	folder := snapshot.Dir(dir)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	const readers = 2*snapshot.MaxWaiting + 3
	for i := range readers {
		if err := os.WriteFile(filepath.Join(folder, fmt.Sprintf("reader%02d.want", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- snapshot.Serve(ctx, db, dir, snapshot.ServeOptions{PollInterval: 5 * time.Millisecond})
	}()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()
	taken := map[string]bool{}
	for deadline := time.Now().Add(60 * time.Second); len(taken) < readers && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond) // slow readers: each takes its copy some passes after it appears
		entries, err := os.ReadDir(folder)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".error") {
				msg, _ := os.ReadFile(filepath.Join(folder, e.Name()))
				t.Fatalf("a reader was refused: %s: %s", e.Name(), msg)
			}
			if name, ok := strings.CutSuffix(e.Name(), ".db"); ok {
				if err := os.Remove(filepath.Join(folder, e.Name())); err != nil {
					t.Fatal(err)
				}
				taken[name] = true
			}
		}
	}
	if len(taken) != readers {
		t.Errorf("%d of %d readers got their copy", len(taken), readers)
	}
}

// A reader meets DIR/snapshots replaced by a symbolic link (which the daemon never serves
// through): it says so at once and writes nothing where the link leads. It wrote its request
// there and waited the whole Wait (two minutes by default) for a copy that never came, then
// asked whether the holder was `envsched ingest`.
func TestReaderRefusesALinkedFolder(t *testing.T) {
	dir, path, _ := held(t)
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, snapshot.Dir(dir)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := snapshot.Open(context.Background(), dir, path, snapshot.Options{Wait: 20 * time.Second})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, snapshot.ErrNoServer) || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("Open with DIR/snapshots a link: %v; want ErrNoServer saying it is a link", err)
		}
	case <-time.After(10 * time.Second): // well before the Wait: the refusal is at once
		t.Error("Open with DIR/snapshots a link waits for a copy that never comes")
		<-done
	}
	if left, _ := os.ReadDir(elsewhere); len(left) != 0 {
		t.Errorf("the reader wrote through the link: %v", left)
	}
}
