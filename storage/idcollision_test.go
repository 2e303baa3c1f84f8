package storage_test

import (
	"path/filepath"
	"testing"

	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// Two rollout ids with the same 64-bit hash (FNV-1a with its final mix, as the dedupe index
// uses it). Found by a distinguished-point collision search over 11-character ids; the test
// checks that they really collide, so it cannot pass on a pair that does not.
const (
	collideA = "9pK0BhixilK"
	collideB = "8qoc7jdoN1C"
)

// TestIDHashCollision delivers two colliding ids twice each: each must be stored once and
// its second delivery counted as a duplicate, within one commit, across commits, and after a
// reopen (the persisted index must hold both).
func TestIDHashCollision(t *testing.T) {
	if storage.HashID(collideA) != storage.HashID(collideB) {
		t.Fatalf("the ids do not collide: %x %x", storage.HashID(collideA), storage.HashID(collideB))
	}
	cases := []struct {
		name    string
		batches [][]string // ids per commit; a nil batch means close and reopen
	}{
		{"one commit", [][]string{{collideA, collideB, collideA, collideB}}},
		{"two commits", [][]string{{collideA, collideB}, {collideA, collideB}}},
		{"second id later", [][]string{{collideA}, {collideB}, {collideB, collideA}}},
		{"across a reopen", [][]string{{collideA, collideB}, nil, {collideB, collideA}}},
		{"second id after a reopen", [][]string{{collideA}, nil, {collideB}, nil, {collideB, collideA}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.db")
			db := openAt(t, path, storage.Options{})
			defer func() { db.Close() }()
			for _, ids := range c.batches {
				if ids == nil {
					if err := db.Close(); err != nil {
						t.Fatal(err)
					}
					db = openAt(t, path, storage.Options{})
					continue
				}
				b := &storage.Batch{}
				for _, id := range ids {
					b.Rollouts = append(b.Rollouts, rollout("e", "t-"+id, 1, 0, "", id))
				}
				commit(t, db, b)
			}
			cnt, err := db.Counters()
			if err != nil {
				t.Fatal(err)
			}
			if cnt.Rollouts != 2 || cnt.Duplicates != 2 {
				t.Errorf("stored %d rollouts and %d duplicates; want 2 and 2", cnt.Rollouts, cnt.Duplicates)
			}
			storagetest.MustCheck(t, db, "")
		})
	}
}
