package storage

import (
	"encoding/binary"
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// idIndex is the dedupe index of rollout ids: the 64-bit hash of every stored rollout_id mapped
// to the sequence of the rollout that carried it. It lives in memory (a B+tree keyed by random
// ids would make every commit rewrite a page per new id); the id_hashes bucket persists it in
// arrival order, one value per commit, and it is loaded at the first commit after Open. A hash
// hit is confirmed against the stored rollout's id, so a hash collision never drops a rollout.
type idIndex struct {
	mu     sync.Mutex
	loaded bool
	m      map[uint64]uint64
}

// hashID is FNV-1a over the id: stable across processes and versions.
func hashID(id string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	return h
}

// load reads the persisted index once.
func (x *idIndex) load(tx *bolt.Tx) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.loaded {
		return nil
	}
	bk := tx.Bucket(bucketIDHashes)
	m := make(map[uint64]uint64, bk.Stats().KeyN*1024)
	err := bk.ForEach(func(k, v []byte) error {
		if len(v)%16 != 0 {
			return fmt.Errorf("id hashes %x: %w", k, ErrCorrupt)
		}
		for i := 0; i < len(v); i += 16 {
			h, seq := binary.BigEndian.Uint64(v[i:]), binary.BigEndian.Uint64(v[i+8:])
			if _, dup := m[h]; !dup {
				m[h] = seq
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	x.m, x.loaded = m, true
	return nil
}

func (x *idIndex) get(h uint64) (uint64, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	seq, ok := x.m[h]
	return seq, ok
}

// merge adds a committed commit's new ids.
func (x *idIndex) merge(add map[uint64]uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for h, seq := range add {
		if _, dup := x.m[h]; !dup {
			x.m[h] = seq
		}
	}
}
