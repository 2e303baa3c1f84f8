package daemon

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// TestRequestRewrittenWithinTheErrorFilesTickIsAnswered: file times move by the kernel's clock
// tick, so a request fixed and renamed into place within the tick its error file was written
// in has the error file's very time. It was taken as refused already and never answered
// (TestBadRequestsGetErrorFilesAndTheDaemonGoesOn failed so once under load: the fixed
// request waited 30 s). On such a tie the version refused tells: the same version stays
// refused, a new one is answered.
func TestRequestRewrittenWithinTheErrorFilesTickIsAnswered(t *testing.T) {
	root := t.TempDir()
	ds, err := newDirs(root)
	if err != nil {
		t.Fatal(err)
	}
	d := &Daemon{dirs: ds, log: slog.New(slog.DiscardHandler)}
	for _, dir := range []string{d.dirs.catalog, d.dirs.rollouts, d.dirs.requests, d.dirs.batches} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	req, errFile := filepath.Join(d.dirs.requests, "r.json"), filepath.Join(d.dirs.batches, errorFileName("r"))
	write := func(path, body string) os.FileInfo { // as a trainer does: a temporary file renamed into place
		t.Helper()
		tmp := filepath.Join(filepath.Dir(path), ".tmp")
		if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	tie := func(fi os.FileInfo) { // the error file written in the request's tick
		t.Helper()
		if err := os.Chtimes(errFile, changedAt(fi), changedAt(fi)); err != nil {
			t.Fatal(err)
		}
	}
	bad := write(req, `{"size": `)
	if err := d.reject("r", "cut short", "r.json", bad); err != nil {
		t.Fatal(err)
	}
	write(errFile, `{"id": "r", "error": "cut short"}`)
	tie(bad)
	if d.needsAnswer("r.json") {
		t.Error("the version refused, its error file of the same time: taken as needing an answer again")
	}
	fixed := write(req, `{"size": 1}`)
	tie(fixed)
	if !d.needsAnswer("r.json") {
		t.Error("a request rewritten within its error file's clock tick is taken as refused: never answered")
	}
	d.refused = nil // a restart: nothing known of what was refused
	if !d.needsAnswer("r.json") {
		t.Error("after a restart, a tie is not read again")
	}
	later := write(req, `{"size": 2}`)
	if err := os.Chtimes(errFile, changedAt(later).Add(-1), changedAt(later).Add(-1)); err != nil {
		t.Fatal(err)
	}
	if !d.needsAnswer("r.json") {
		t.Error("a request newer than its error file is not answered")
	}
}
