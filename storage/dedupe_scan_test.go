package storage_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// The dedupe of a commit before the id table is whole (the first commit after every Open: a
// scan of id_hashes behind a bitmap of the wanted hashes' top bits) stores exactly the rollouts
// whose id a plain map has not seen: random ids, some repeated within a batch, some stored by
// an earlier commit, some sharing their hash's top 16 bits with a stored id, over many reopens,
// with pages released every few values of the scan. A duplicate counted twice would be a
// corrupt count; a new id dropped, a lost rollout.
func TestFirstCommitDedupeMatchesAMap(t *testing.T) {
	defer storage.SetReleaseEvery(3)()
	rng := rand.New(rand.NewPCG(7, 11))
	path := filepath.Join(t.TempDir(), "envsched.db")
	seen := map[string]bool{}
	var stored []string // ids in the order stored
	byTop := map[uint64][]string{}
	fresh := func() string { return fmt.Sprintf("id-%d-%d", rng.IntN(1e9), rng.IntN(1e9)) }
	wantRollouts, wantDups := 0, 0
	for round := range 20 {
		db := openAt(t, path, storage.Options{})
		var rs []storage.Rollout
		for range 1 + rng.IntN(300) {
			var id string
			switch c := rng.IntN(10); {
			case c < 2 && len(stored) > 0: // stored before
				id = stored[rng.IntN(len(stored))]
			case c < 3 && len(rs) > 0: // earlier in this batch
				id = rs[rng.IntN(len(rs))].RolloutID
			case c < 4 && len(stored) > 0: // a new id with a stored id's top 16 bits, when found
				top := storage.HashID(stored[rng.IntN(len(stored))]) >> 48
				id = fresh()
				for range 2000 {
					if storage.HashID(id)>>48 == top {
						break
					}
					id = fresh()
				}
			default:
				id = fresh()
			}
			rs = append(rs, rollout("env", fmt.Sprint("t", rng.IntN(5)), 1, 1, "", id))
		}
		for _, r := range rs {
			if seen[r.RolloutID] {
				wantDups++
				continue
			}
			seen[r.RolloutID] = true
			stored = append(stored, r.RolloutID)
			h := storage.HashID(r.RolloutID)
			byTop[h>>48] = append(byTop[h>>48], r.RolloutID)
			wantRollouts++
		}
		commit(t, db, &storage.Batch{Rollouts: rs})
		c, err := db.Counters()
		if err != nil {
			t.Fatal(err)
		}
		if c.Rollouts != int64(wantRollouts) || c.Duplicates != int64(wantDups) {
			t.Fatalf("round %d: %d rollouts, %d duplicates stored; a map says %d, %d", round, c.Rollouts, c.Duplicates, wantRollouts, wantDups)
		}
		storagetest.MustCheck(t, db, "")
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	shared := 0
	for _, ids := range byTop {
		if len(ids) > 1 {
			shared++
		}
	}
	if shared == 0 {
		t.Error("no two stored ids share their hash's top 16 bits: the bitmap's collisions went untested")
	}
}
