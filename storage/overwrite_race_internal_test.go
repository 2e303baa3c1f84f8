package storage

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/envsched/envsched/record"
)

// TestCommitBetweenAReadsBeginAndItsCheckIsNoOverwrite (review15): a read's transaction id is
// checked (DB.sameTx) after bbolt's Begin, holding no lock that keeps a commit out (reads run
// beside Commit). A commit that lands in between (its meta page written, txs.last stored)
// leaves the read on the transaction before the newest: that is no overwrite. The read below
// is DB.begin's, with a commit run by another goroutine between the Begin and the check.
func TestCommitBetweenAReadsBeginAndItsCheckIsNoOverwrite(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "envsched.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 40 { // room in the mapping: the commit below must not remap while the read holds it
		var b Batch
		for j := range 50 {
			b.Rollouts = append(b.Rollouts, Rollout{Rollout: record.Rollout{Env: "e", Task: fmt.Sprint(i*50 + j), Reward: 1}})
		}
		if _, err := db.Commit(&b); err != nil {
			t.Fatal(err)
		}
	}
	before := db.txs.last.Load()
	err = db.guard(func() error {
		return db.bolt.View(func(tx *bolt.Tx) error {
			done := make(chan error)
			go func() {
				_, err := db.Commit(&Batch{Rollouts: []Rollout{{Rollout: record.Rollout{Env: "e", Task: "t", Reward: 1}}}})
				done <- err
			}()
			if err := <-done; err != nil {
				return fmt.Errorf("commit: %w", err)
			}
			if d := db.sameTx(tx, before); d != nil {
				return d
			}
			return nil
		})
	})
	var d *DamagedError
	if errors.As(err, &d) && d.Overwritten {
		t.Fatalf("a read begun just before a commit was refused: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
}

// TestReadsBesideCommitsAreNeverOverwritten (review15):
// DB.begin checks the transaction id a read began on (DB.sameTx, from hostile15) after bbolt's
// Begin without writeMu; a commit landing in between (txs.last stored) leaves the read on
// last-1, neither last nor pending, and the read is refused as "overwritten in place", which
// breaks the DB for good (DB.broken). Readers (DB.View) beside a committer: any refusal fails
// (a stress check, no timed assertion; it fails within a second here). Passes when a read
// may begin on the transaction before the newest committed, or the check is under writeMu.
func TestReadsBesideCommitsAreNeverOverwritten(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "envsched.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var stop atomic.Bool
	var wg sync.WaitGroup
	var bad atomic.Pointer[error]
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if err := db.View(func(r *Reader) error { return nil }); err != nil {
					bad.CompareAndSwap(nil, &err)
					return
				}
			}
		}()
	}
	for i := range 300 {
		if _, err := db.Commit(&Batch{Rollouts: []Rollout{{Rollout: record.Rollout{Env: "e", Task: fmt.Sprint(i), Reward: 1}}}}); err != nil {
			bad.CompareAndSwap(nil, &err)
			break
		}
		if bad.Load() != nil {
			break
		}
	}
	stop.Store(true)
	wg.Wait()
	if p := bad.Load(); p != nil {
		t.Fatalf("reads beside commits: %v", *p)
	}
}
