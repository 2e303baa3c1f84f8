package storage

import (
	"errors"
	"os"
	"testing"
	"time"
)

// TestBesideOnAFileCutShortReturns (review14): Beside begins a second read transaction while
// r's is open. bbolt's Begin takes its meta lock, then reads the meta page: on a file cut
// short under the running process (`: > envsched.db`, hostile14b's case) that read faults,
// View's guard turns the fault into a panic, and the panic leaves bbolt's meta lock held (and
// db.writeMu, which Beside unlocks on the line after Begin, not in a defer). Unwinding, bbolt's
// View rolls r's own transaction back, and its removeTx waits for that meta lock for ever: the
// load, hence the daemon's loop, hangs with no answer and no exit, as hostile14b fixed for
// transactions that begin alone. Outside this nested Begin the damage is a *DamagedError.
// A fix: before Begin, compare the file's length (os.Stat of db.path) with r.tx.Size() and,
// when it is shorter, run fn(r) (which faults in r's goroutine, under View's guard, with no
// bbolt lock taken) instead of beginning; and release writeMu with a defer.
func TestBesideOnAFileCutShortReturns(t *testing.T) {
	db := openFour(t) // never closed: on the branch Close would wait for ever (the defect)
	done := make(chan error, 1)
	go func() {
		done <- db.View(func(r *Reader) error {
			if _, err := r.overlayOf(); err != nil { // the log read while the file is whole
				return err
			}
			if err := os.Truncate(db.path, 0); err != nil { // cut short after r began
				return err
			}
			return r.Beside(func(r2 *Reader) error { _, err := readAll(r2); return err })()
		})
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Beside on a file cut short: %v; want a *DamagedError", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("View with Beside on a file cut short did not return in 20 s: r's rollback waits for the " +
			"meta lock that Beside's faulted Begin left held")
	}
	if !db.writeMu.TryLock() {
		t.Fatal("writeMu is still held after Beside faulted: every later Commit, StoreAnswer and Close waits for ever")
	}
	db.writeMu.Unlock()
}
