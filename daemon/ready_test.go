package daemon

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/envsched/envsched/fsutil"
)

// readyRequest picks only request files that can be read now; everything else waits for the
// watcher's debounce (or is not a request at all).
func TestReadyRequest(t *testing.T) {
	dir := t.TempDir()
	d := &Daemon{}
	var err error
	if d.dirs, err = newDirs(dir); err != nil {
		t.Fatal(err)
	}
	reqs := d.dirs.requests
	must(t, os.MkdirAll(filepath.Join(reqs, "sub"), 0o755))
	must(t, os.MkdirAll(filepath.Join(reqs, "folder.json"), 0o755))
	must(t, os.MkdirAll(d.dirs.rollouts, 0o755))
	for name, body := range map[string]string{
		"ready.json": "{}", "empty.json": "", ".hidden.json": "{}", "x.json.tmp": "{}",
		"notjson.txt": "{}", "sub/nested.json": "{}", "target": "{}",
	} {
		must(t, os.WriteFile(filepath.Join(reqs, name), []byte(body), 0o644))
	}
	must(t, os.WriteFile(filepath.Join(d.dirs.rollouts, "r.json"), []byte("{}"), 0o644))
	must(t, os.Symlink(filepath.Join(reqs, "target"), filepath.Join(reqs, "link.json")))
	must(t, syscall.Mkfifo(filepath.Join(reqs, "fifo.json"), 0o644))
	for _, c := range []struct {
		path string
		want bool
	}{
		{filepath.Join(reqs, "ready.json"), true},
		{filepath.Join(reqs, "empty.json"), false},      // created, not yet written
		{filepath.Join(reqs, ".hidden.json"), false},    // a write in progress
		{filepath.Join(reqs, "x.json.tmp"), false},      // a write in progress
		{filepath.Join(reqs, "notjson.txt"), false},     // not a request name
		{filepath.Join(reqs, "sub/nested.json"), false}, // not in DIR/requests itself
		{filepath.Join(reqs, "folder.json"), false},     // a folder: the debounce, then its error file
		{filepath.Join(reqs, "link.json"), false},       // a link is never followed
		{filepath.Join(reqs, "fifo.json"), false},       // never opened by the watcher
		{filepath.Join(reqs, "gone.json"), false},       // removed already
		{filepath.Join(d.dirs.rollouts, "r.json"), false},
	} {
		if got := d.readyRequest(c.path); got != c.want {
			t.Errorf("readyRequest(%s) = %v, want %v", c.path, got, c.want)
		}
	}
}

// A request renamed into place is answered without the watcher's debounce: with a debounce
// of an hour and no safety poll, only the urgent hand-over can answer it, and its barrier
// still reads the lines written before it.
func TestRenamedRequestSkipsTheDebounce(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir, false)
	cfg.debounce = time.Hour
	r := serveTest(t, cfg)
	if r.d.WatchMode() != "notify" {
		t.Skip("fsnotify unavailable here")
	}
	// past start-up (its last step writes status.json): a request written before its listing
	// would be answered by the listing, debounce or not
	r.waitFile(filepath.Join(dir, StatusFile))
	appendFile(t, filepath.Join(dir, "rollouts", "a.jsonl"), rolloutLines("a", 40))
	writeRequest(t, dir, "u1.json", `{}`)
	if got := rolloutsSeen(t, r.batch("u1")); got != 40 {
		t.Errorf("rollouts_seen %d; want the 40 lines written before the request", got)
	}
}

// A batch file written early into a folder the trainer removed (and publish made again) is
// written again at once, not left to the next sweep.
func TestEarlyBatchInARemovedFolder(t *testing.T) {
	d := openTest(t)
	answer := []byte(`{"id":"x"}` + "\n")
	file, err := fsutil.Prepare(filepath.Join(d.dirs.batches, "x.json"), 0o644, func(w io.Writer) error {
		_, err := w.Write(answer)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.RemoveAll(d.dirs.batches))
	ok, err := d.publish("x", answer, timing{seen: time.Now()}, file)
	if !ok || err != nil {
		t.Fatalf("publish = %v, %v; want the batch written", ok, err)
	}
	if got, err := os.ReadFile(filepath.Join(d.dirs.batches, "x.json")); err != nil || !bytes.Equal(got, answer) {
		t.Errorf("batch file holds %q (%v), want %q", got, err, answer)
	}
}
