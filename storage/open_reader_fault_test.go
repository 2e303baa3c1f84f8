package storage_test

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/envsched/envsched/storage"
)

// TestReadOpenWhileAnotherBeginFaultsEnds (review14): a read transaction that is open when
// the file is cut short (the snapshot server writing a copy for `envsched stats`, the id
// table's background build) must still end once the damage is met elsewhere. bbolt's read
// Begin takes its meta lock and then reads the meta page; on a file cut short that read
// faults, DB.guard turns it into a *DamagedError and keeps it (hostile14b), but the meta lock
// stays held (beginTx releases it without a defer). Every open transaction then waits for that
// lock in its rollback (removeTx) for ever: here the View below never returns; in the daemon
// the snapshot goroutine never ends and Run's wg.Wait hangs the exit, the hang hostile14b set
// out to end. A fix: do not let Begin meet the damage: DB.guard (or db.view) compares the
// file's length (a Stat of the open file) with the pages last known before it begins, and
// refuses with the *DamagedError when it is shorter.
func TestReadOpenWhileAnotherBeginFaultsEnds(t *testing.T) {
	path := damagedDB(t)
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// not closed: on the branch Close would wait for the stuck transaction's build or lock
	began, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- db.View(func(r *storage.Reader) error {
			close(began)
			<-release // a long read in progress (a snapshot being copied)
			return nil
		})
	}()
	<-began
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Counters(); !errors.Is(err, storage.ErrCorrupt) {
		t.Fatalf("counters on a file cut short: %v; want storage.ErrCorrupt", err)
	}
	close(release)
	select {
	case err := <-done:
		if err != nil {
			t.Logf("the open read returned %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a read transaction open when another Begin met the damage never ended: its rollback waits " +
			"for the meta lock that the faulted Begin left held")
	}
}
