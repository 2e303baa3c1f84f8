package storage

import bolt "go.etcd.io/bbolt"

// ReleasePages drops the database pages this process has read from its memory map. bbolt
// reads through a read-only shared mapping of the file, and every page a read touches stays
// counted in the process's resident memory (RSS) until the kernel needs it back: loading the
// model of a million tasks reads about a gigabyte of pages it never reads again. Dropping them
// from the mapping (madvise MADV_DONTNEED) changes no data: bbolt writes with pwrite, never
// through the mapping, so its pages are clean; they stay in the page cache, and a later read
// maps them again. Anything read before stays valid (values read through a Reader are copies,
// and the mapping itself is kept). On systems other than Linux it does nothing.
func (r *Reader) ReleasePages() { releaseMapped(r.tx) }

// releaseEvery is how many values a long scan reads between two releases of its pages (a
// variable for the tests, which release more often).
var releaseEvery = 1 << 15

// releaser releases the pages of tx after every releaseEvery calls of tick.
type releaser struct {
	tx *bolt.Tx
	n  int
}

func (rl *releaser) tick() {
	if rl.n++; rl.n%releaseEvery == 0 {
		releaseMapped(rl.tx)
	}
}
