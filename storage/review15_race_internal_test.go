package storage

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/envsched/envsched/record"
)

// TestReadsBesideCommitsAreNeverOverwritten (review15, failing; as on review15-hostile15):
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
