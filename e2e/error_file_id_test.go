package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestInvalidIDNamedLikeAnErrorFileGetsItsOwn: request `a.error` (an invalid ID: no ID ends in
// ".error") written after request `a` was refused was taken for answered, since
// batches/a.error.json (a's error file) is the name an answer to `a.error` would have: it never
// got its own error file, nor a word in the log, and a trainer waiting on it read a's error.
// Only a valid ID's answer file counts as its answer now.
func TestInvalidIDNamedLikeAnErrorFileGetsItsOwn(t *testing.T) {
	dir := t.TempDir()
	d := start(t, dir, opts{})
	d.waitReady()
	writeRequest(t, dir, "a", `{"size": -1}`)
	waitUntil(t, "a's error file", func() bool {
		_, err := os.Stat(filepath.Join(dir, "batches", "a.error.json"))
		return err == nil
	})
	writeRequest(t, dir, "a.error", `{"size": 2}`)
	writeRequest(t, dir, "after", `{"size": 1}`)
	waitBatch(t, d, "after")
	writeRequest(t, dir, "after2", `{"size": 1}`) // the error files of after's pass are out by its answer
	waitBatch(t, d, "after2")
	if _, err := os.Stat(filepath.Join(dir, "batches", "a.error.error.json")); err != nil {
		t.Errorf("request a.error has no error file of its own: %v\n%s", err, tail(d.stderr.String(), 2000))
	}
	data, err := os.ReadFile(filepath.Join(dir, "batches", "a.error.json"))
	must(t, err)
	var e struct{ ID string }
	if json.Unmarshal(data, &e); e.ID != "a" {
		t.Errorf("a's error file changed: %s", data)
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}
