package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/envsched/envsched/record"
)

// openFour opens a database with four commits in it; it is never closed by the test that
// cuts it short (Close gives up on it after brokenCloseWait).
func openFour(t *testing.T) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "x.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		var b Batch
		b.Tasks = append(b.Tasks, record.Task{Env: "e1", Task: fmt.Sprintf("c%02d", i), Text: "text"})
		b.Rollouts = append(b.Rollouts, Rollout{Rollout: record.Rollout{Env: "e0", Task: fmt.Sprintf("t%02d", i), Reward: 1}})
		if _, err := db.Commit(&b); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// cutInTheWindow makes the next DB.begin find the file whole and then cut it to nothing before
// bbolt's Begin reads the meta pages: the window a look at the length cannot close.
func cutInTheWindow(t *testing.T) {
	t.Helper()
	beforeBegin = func(db *DB) {
		beforeBegin = nil
		if err := os.Truncate(db.path, 0); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { beforeBegin = nil })
}

func within(t *testing.T, what string, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not return in 20 s", what)
		return nil
	}
}

// TestBesideBeginFaultingInTheWindowReturns: the file is cut short after Beside and DB.begin
// looked at its length, so bbolt's Begin faults with its meta lock held. The View around it
// must still return the damage (its rollback waited for that lock for ever), and writeMu must
// be free.
func TestBesideBeginFaultingInTheWindowReturns(t *testing.T) {
	db := openFour(t)
	done := make(chan error, 1)
	go func() {
		done <- db.View(func(r *Reader) error {
			if _, err := r.overlayOf(); err != nil {
				return err
			}
			cutInTheWindow(t)
			return r.Beside(func(r2 *Reader) error { _, err := readAll(r2); return err })()
		})
	}()
	if err := within(t, "View with Beside whose begin faulted", done); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Beside whose begin faulted: %v; want a *DamagedError", err)
	}
	if !db.locksLost.Load() {
		t.Fatal("the begin that faulted was not recorded")
	}
	if !db.writeMu.TryLock() {
		t.Fatal("writeMu is still held after Beside's begin faulted")
	}
	db.writeMu.Unlock()
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	within(t, "Close after a begin faulted", closed)
}

// TestBeginFaultingInTheWindowLeavesOtherReadsFree: a read transaction open in another
// goroutine when a lone View's begin faults (the file cut in the window) must still end: its
// rollback waited for the meta lock the fault left held. Later transactions are refused with
// the damage.
func TestBeginFaultingInTheWindowLeavesOtherReadsFree(t *testing.T) {
	db := openFour(t)
	open, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- db.View(func(r *Reader) error {
			close(open)
			<-release
			return nil
		})
	}()
	<-open
	cutInTheWindow(t)
	second := make(chan error, 1)
	go func() { second <- db.View(func(r *Reader) error { return nil }) }()
	if err := within(t, "a View whose begin faulted", second); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a View whose begin faulted: %v; want a *DamagedError", err)
	}
	close(release)
	if err := within(t, "the View open when another's begin faulted", done); err != nil {
		t.Fatalf("the View open before the damage: %v", err)
	}
	third := make(chan error, 1)
	go func() { third <- db.View(func(r *Reader) error { return nil }) }()
	if err := within(t, "a View after the damage", third); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a View after the damage: %v; want a *DamagedError", err)
	}
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	within(t, "Close after a begin faulted", closed)
}

// TestReplacedFileIsNotCutShort: the database removed and a short file written at its path
// while it is open is not this file cut short (the file mapped is the one opened, whole):
// reads go on and say nothing of damage, so that the daemon's check of the path can say the
// file was removed or replaced (a read that came first called it damaged, with advice to
// restore a backup: daemon's TestDatabaseRemovedWhileServing failed about one time in three).
func TestReplacedFileIsNotCutShort(t *testing.T) {
	db := openFour(t)
	defer db.Close()
	if err := os.Remove(db.path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db.path, []byte("another file"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := db.Counters()
	if err != nil || c.Rollouts != 4 {
		t.Fatalf("counters read with the path replaced: %+v, %v; want 4 rollouts, no damage", c, err)
	}
}
