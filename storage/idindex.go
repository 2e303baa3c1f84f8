package storage

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// idIndex is the dedupe index of rollout ids: the 64-bit hash of every stored rollout_id mapped
// to the sequence of the rollout that carried it. It lives in memory (a B+tree keyed by random
// ids would make every commit rewrite a page per new id); the id_hashes bucket persists it in
// arrival order, one value per commit, and it is loaded at the first commit after Open. A hash
// hit is confirmed against the stored rollout's id, so a hash collision never drops a rollout.
//
// It is an open-addressing table (one cache miss per lookup, no per-entry allocation). Only the
// writer uses it, under DB.writeMu; a commit inserts as it goes, and a failed commit drops the
// whole table, to be loaded again from what is committed.
type idIndex struct {
	loaded bool
	slots  []idSlot // len is a power of two; h == 0 marks an empty slot
	n      int
	sink   uint64 // keeps warm's loads from being optimised away
}

type idSlot struct{ h, seq uint64 }

// hashID is FNV-1a over the id, never 0: stable across processes and versions.
func hashID(id string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	h ^= h >> 29 // FNV's low bits are weak: mix before they pick the slot
	if h == 0 {
		h = 1
	}
	return h
}

// load reads the persisted index once.
func (x *idIndex) load(tx *bolt.Tx) error {
	if x.loaded {
		return nil
	}
	bk := tx.Bucket(bucketIDHashes)
	total := 0
	_ = bk.ForEach(func(_, v []byte) error { total += len(v) / 16; return nil })
	size := 1 << 16
	for 4*total > 3*size {
		size *= 2
	}
	x.slots, x.n = make([]idSlot, size), 0
	err := bk.ForEach(func(k, v []byte) error {
		if len(v)%16 != 0 {
			return fmt.Errorf("id hashes %x: %w", k, ErrCorrupt)
		}
		for i := 0; i < len(v); i += 16 {
			x.insert(binary.BigEndian.Uint64(v[i:]), binary.BigEndian.Uint64(v[i+8:]))
		}
		return nil
	})
	if err != nil {
		x.drop()
		return err
	}
	x.loaded = true
	return nil
}

// drop forgets the table; the next commit loads it again.
func (x *idIndex) drop() { x.loaded, x.slots, x.n = false, nil, 0 }

// count returns how many entries are stored under h.
func (x *idIndex) count(h uint64) int {
	mask := uint64(len(x.slots) - 1)
	n := 0
	for i := h & mask; x.slots[i].h != 0; i = (i + 1) & mask {
		if x.slots[i].h == h {
			n++
		}
	}
	return n
}

// findOrInsert asks same about the rollout of every entry under h, in order, until it answers
// true (found); when none does, seq is stored under h (a new id, or one that collides with
// every id there). One probe for the common case of a new id.
func (x *idIndex) findOrInsert(h, seq uint64, same func(seq uint64) (bool, error)) (found bool, err error) {
	if 4*(x.n+1) > 3*len(x.slots) {
		x.grow()
	}
	mask := uint64(len(x.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch x.slots[i].h {
		case h:
			if ok, err := same(x.slots[i].seq); ok || err != nil {
				return ok, err
			}
		case 0:
			x.slots[i] = idSlot{h, seq}
			x.n++
			return false, nil
		}
	}
}

// insert adds the entry (h, seq); the entries under one hash are those of distinct ids.
func (x *idIndex) insert(h, seq uint64) {
	if 4*(x.n+1) > 3*len(x.slots) { // at most three quarters full
		x.grow()
	}
	mask := uint64(len(x.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		if x.slots[i].h == 0 {
			x.slots[i] = idSlot{h, seq}
			x.n++
			return
		}
	}
}

// reserve makes room for n more ids without growing.
func (x *idIndex) reserve(n int) {
	for 4*(x.n+n) > 3*len(x.slots) {
		x.grow()
	}
}

// grow doubles the table.
func (x *idIndex) grow() {
	old := x.slots
	x.slots, x.n = make([]idSlot, 2*len(old)), 0
	for _, s := range old {
		if s.h != 0 {
			x.insert(s.h, s.seq)
		}
	}
}

// warm appends the hash of every rollout's id to hs (0 for none) and touches the slot each
// would probe first. The loads do not depend on each other, so the processor overlaps their
// cache misses; the lookups that follow, one by one between other work, then find the table
// in cache. On a table of millions of ids this halves the cost of deduplication.
func (x *idIndex) warm(rs []Rollout, hs []uint64) []uint64 {
	x.reserve(len(rs)) // grow first: growing after warming would leave the table cold
	mask := uint64(len(x.slots) - 1)
	var sink uint64
	for i := range rs {
		var h uint64
		if id := rs[i].RolloutID; id != "" {
			h = hashID(id)
			sink += x.slots[h&mask].h
		}
		hs = append(hs, h)
	}
	x.sink = sink
	return hs
}
