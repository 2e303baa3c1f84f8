package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

// idIndex is the dedupe index of rollout ids: the 64-bit hash of every stored rollout_id mapped
// to the sequence of the rollout that carried it. It lives in memory (a B+tree keyed by random
// ids would make every commit rewrite a page per new id); the id_hashes bucket persists it in
// arrival order, one value per commit. A hash hit is confirmed against the stored rollout's id,
// so a hash collision never drops a rollout.
//
// Loading the whole table takes seconds on tens of millions of ids, so the first commit after
// Open does not wait for it: the table is built by a background goroutine from a read
// transaction (started by the second commit or the first answer stored), and until it is ready
// each commit scans id_hashes for its own rollouts' hashes only (a sequential read, no table of
// every id) into a small table that lives for that commit.
// Ids committed after the background snapshot are kept aside (pending) and added when the
// table is adopted, at the next commit after it is ready.
//
// It is an open-addressing table (one cache miss per lookup, no per-entry allocation). Only the
// writer uses it, under DB.writeMu; a commit inserts as it goes, and a failed commit drops the
// whole table, to be built again from what is committed.
type idIndex struct {
	loaded bool
	slots  []idSlot // len is a power of two; h == 0 marks an empty slot
	n      int
	sink   uint64 // keeps warm's loads from being optimised away

	bg      *idBuild      // the table being built in the background; nil when none
	pending []idSlot      // ids committed after bg's snapshot, in order
	scans   int           // commits served by a scan since the table was whole, before a build
	gate    chan struct{} // tests: when set, a finished background build waits for it to close
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

// load reads the persisted index whole, in the calling transaction.
func (x *idIndex) load(tx *bolt.Tx) error {
	if x.loaded {
		return nil
	}
	slots, n, err := readIDTable(tx, nil)
	if err != nil {
		x.drop()
		return err
	}
	x.slots, x.n, x.loaded = slots, n, true
	return nil
}

// errStopped is the error of a build given up because the database closes.
var errStopped = errors.New("dedupe table build stopped")

// readIDTable builds the table of every id in id_hashes. It gives up, returning errStopped,
// when stop is set.
func readIDTable(tx *bolt.Tx, stop *atomic.Bool) ([]idSlot, int, error) {
	bk := tx.Bucket(bucketIDHashes)
	total := 0
	rl := releaser{tx: tx}
	_ = bk.ForEach(func(_, v []byte) error { rl.tick(); total += len(v) / 16; return nil })
	size := 1 << 16
	for 4*total > 3*size {
		size *= 2
	}
	x := idIndex{slots: make([]idSlot, size)}
	err := bk.ForEach(func(k, v []byte) error {
		if len(v)%16 != 0 {
			return fmt.Errorf("id hashes %x: %w", k, ErrCorrupt)
		}
		if stop != nil && stop.Load() {
			return errStopped
		}
		rl.tick()
		for i := 0; i < len(v); i += 16 {
			x.insert(binary.BigEndian.Uint64(v[i:]), binary.BigEndian.Uint64(v[i+8:]))
		}
		return nil
	})
	return x.slots, x.n, err
}

// drop forgets the table; the next commit builds it again. A build under way is kept: it
// reads committed state only.
func (x *idIndex) drop() { x.loaded, x.slots, x.n = false, nil, 0 }

// idBuild is a table built by a background goroutine from one read transaction.
type idBuild struct {
	done  chan struct{}
	stop  atomic.Bool
	slots []idSlot
	n     int
	err   error
}

// prepare makes the table ready for a commit of rs in tx: the whole table when it is loaded
// or its background build is done (adopting it, with the ids committed since its snapshot);
// otherwise a table of the stored ids whose hash is one of rs's, found by one scan of
// id_hashes. It reports whether the table is whole.
func (x *idIndex) prepare(tx *bolt.Tx, rs []Rollout) (bool, error) {
	if x.loaded {
		return true, nil
	}
	if x.bg != nil {
		select {
		case <-x.bg.done:
			x.adopt()
			if x.loaded {
				return true, nil
			}
		default:
		}
	}
	return false, x.scan(tx, rs)
}

// adopt takes the finished background table and adds the pending ids to it. A build that
// failed is forgotten: the next commit starts another.
func (x *idIndex) adopt() {
	bg := x.bg
	x.bg = nil
	if bg.err != nil {
		x.pending = nil
		return
	}
	x.slots, x.n, x.loaded = bg.slots, bg.n, true
	for _, s := range x.pending {
		x.insert(s.h, s.seq)
	}
	x.pending = nil
}

// scan sets the table to the stored ids whose hash is that of one of rs's ids. A bitmap of the
// wanted hashes' top 16 bits (8 KiB, in cache) turns away nearly every stored hash before the
// table is probed: the scan reads every stored id, tens of millions after a long run.
func (x *idIndex) scan(tx *bolt.Tx, rs []Rollout) error {
	want := idIndex{slots: make([]idSlot, 1<<4)}
	var top [1 << 10]uint64 // bit h>>48 set for every wanted h
	for i := range rs {
		if id := rs[i].RolloutID; id != "" {
			h := hashID(id)
			want.insert(h, 1)
			top[h>>54] |= 1 << (h >> 48 & 63)
		}
	}
	x.slots, x.n = make([]idSlot, 1<<4), 0
	if want.n == 0 {
		return nil
	}
	rl := releaser{tx: tx}
	return tx.Bucket(bucketIDHashes).ForEach(func(k, v []byte) error {
		if len(v)%16 != 0 {
			return fmt.Errorf("id hashes %x: %w", k, ErrCorrupt)
		}
		rl.tick()
		for i := 0; i < len(v); i += 16 {
			if h := binary.BigEndian.Uint64(v[i:]); top[h>>54]&(1<<(h>>48&63)) != 0 && want.has(h) {
				x.insert(h, binary.BigEndian.Uint64(v[i+8:]))
			}
		}
		return nil
	})
}

// has reports whether h is in the table.
func (x *idIndex) has(h uint64) bool {
	mask := uint64(len(x.slots) - 1)
	for i := h & mask; x.slots[i].h != 0; i = (i + 1) & mask {
		if x.slots[i].h == h {
			return true
		}
	}
	return false
}

// committed is told of every commit that succeeded, with its new ids, under DB.writeMu. When
// the table is not whole, it keeps the ids for the background table, and starts that build at
// the second commit since the table was last whole (or at the first answer stored, see
// answered): a daemon's first commit after a start is the one its first answer waits for, and
// the build, a second or more of CPU on tens of millions of ids, would slow that answer.
func (x *idIndex) committed(db *DB, ids []idSlot) {
	if x.loaded {
		return
	}
	x.slots, x.n = nil, 0 // the scanned table served this commit only
	if x.bg != nil {
		x.pending = append(x.pending, ids...)
		return
	}
	x.scans++
	if x.scans >= 2 {
		x.startBuild(db)
	}
}

// answered is told of every answer stored, under DB.writeMu: the build of the table starts
// now if it has not.
func (x *idIndex) answered(db *DB) {
	if !x.loaded && x.bg == nil {
		x.startBuild(db)
	}
}

// startBuild starts building the whole table in the background, from a read transaction that
// sees every commit so far. The transaction's begin and the read run under db.guard: on a file
// cut short under the running process they faulted outside any guard, which killed the process.
func (x *idIndex) startBuild(db *DB) {
	tx, err := db.begin()
	if err != nil {
		return // a later commit tries again
	}
	bg := &idBuild{done: make(chan struct{})}
	x.bg, x.pending, x.scans = bg, nil, 0
	gate := x.gate
	go func() {
		defer close(bg.done)
		bg.err = db.guard(func() (err error) {
			bg.slots, bg.n, err = readIDTable(tx, &bg.stop)
			return err
		})
		db.rollback(tx)
		if gate != nil {
			<-gate
		}
	}()
}

// close stops a background build and waits for it (it holds a read transaction, which would
// keep the database from closing).
func (x *idIndex) close() {
	if x.bg != nil {
		x.bg.stop.Store(true)
		<-x.bg.done
		x.bg = nil
	}
}

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
