package storage

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFailedOpenLeavesNoFile (review15): Open keeps a second descriptor of the file
// for the transaction watch (txWatch.file, hostile15) but closes only bbolt's when it fails
// after startTxWatch (checkLength, init, bindExchange): every refused open leaks a descriptor
// of the database file (a process that retries holds the old file open, and its disk space
// once the file is replaced). Here Open is refused for a database made for another exchange
// folder, 20 times. Passes when those error paths close txs.file too.
func TestFailedOpenLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "envsched.db")
	db, err := Open(path, Options{ExchangeDir: a})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	fds := func() int {
		es, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd")
		}
		return len(es)
	}
	before := fds()
	refused := 0
	for range 20 {
		if db, err := Open(path, Options{ExchangeDir: b}); err == nil {
			db.Close()
		} else {
			refused++
		}
	}
	if refused == 0 {
		t.Skip("a database made for another exchange folder was not refused; the test needs a failing Open")
	}
	if after := fds(); after > before {
		t.Errorf("%d refused opens left %d more open files (%d before, %d after)", refused, after-before, before, after)
	}
}
