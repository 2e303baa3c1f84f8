package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// The latest catalogue is the truth. A task that has a catalogue row but is listed by no
// catalogue file as they are now (its row was removed from a rewritten file, its file was
// deleted, or a new catalogue moved it to another environment, which is another task) is
// retired: it is never chosen again, and everything stored about it (statistics, rollouts,
// its row) is kept. A retired task listed again (a row read again) is chosen again. Tasks first
// seen in rollouts, with no catalogue row, are never retired.
//
// The retired tasks are the keys of bucket "retired" (ENV 0x00 TASK), created by the first
// commit that retires one: a database without it has none.
//
// What each catalogue file listed is kept too, in bucket "file_lists" (FileState ID, 8 bytes
// big-endian -> its list: FileList), as of the last list it was read well for: a catalogue
// file that cannot be read now, or lists no task (Batch.Held), then holds back exactly the tasks
// it listed when it last could be read, and other files' tasks retire as usual. A new database
// is created with the bucket; in one an older build made, the first commit with a list creates
// it, and a file held then has listed what only the older build knew: it is stored as unknown,
// and while it is held no task is retired (the older builds' rule). A held file with no list
// (new, and never read well) holds nothing back. Lists are kept for the files of the last list
// and the files held (a file replaced at its path by one that is held counts as held), and
// dropped for the others.

var (
	bucketRetired   = []byte("retired")
	bucketFileLists = []byte("file_lists")
)

// unknownList is the stored list of a file held when the lists began: what it listed is unknown.
var unknownList = []byte("?")

func retiredKey(k TaskKey) []byte {
	return append(append(append(make([]byte, 0, len(k.Env)+1+len(k.Task)), k.Env...), 0), k.Task...)
}

// FileList is one catalogue file's list of tasks as Batch.Lists takes it: Add each key in the
// file's order. It is kept encoded as it grows, each key a few bytes when the names share
// prefixes (t0000017 after t0000016): a million keys in a slice were 32 MB at the moment the list
// is made, the daemon's peak of memory, and twice that once the collector's target grew with it.
// The encoding: the environment's index in the list's own table (uvarint; a new one is followed
// by its length and bytes), the bytes the task shares with the previous task, then the length
// and bytes of the rest. A digest of the keys (a sum of their FNV-1a hashes, and their count)
// says whether the stored list is the same.
type FileList struct {
	buf  []byte
	envs map[string]uint64
	prev string
	sum  uint64
	n    uint64
}

// Add appends k to the list.
func (l *FileList) Add(k TaskKey) {
	if l.envs == nil {
		l.envs = map[string]uint64{}
	}
	idx, ok := l.envs[k.Env]
	if !ok {
		idx = uint64(len(l.envs))
		l.envs[k.Env] = idx
	}
	l.buf = binary.AppendUvarint(l.buf, idx)
	if !ok {
		l.buf = binary.AppendUvarint(l.buf, uint64(len(k.Env)))
		l.buf = append(l.buf, k.Env...)
	}
	shared := 0
	for shared < len(l.prev) && shared < len(k.Task) && l.prev[shared] == k.Task[shared] {
		shared++
	}
	l.buf = binary.AppendUvarint(l.buf, uint64(shared))
	l.buf = binary.AppendUvarint(l.buf, uint64(len(k.Task)-shared))
	l.buf = append(l.buf, k.Task[shared:]...)
	l.prev = k.Task
	const offset, prime = 14695981039346656037, 1099511628211 // FNV-1a, 64 bits
	h := uint64(offset)
	for i := 0; i < len(k.Env); i++ {
		h = (h ^ uint64(k.Env[i])) * prime
	}
	h *= prime // the 0 between env and task
	for i := 0; i < len(k.Task); i++ {
		h = (h ^ uint64(k.Task[i])) * prime
	}
	l.sum += h
	l.n++
}

// Each calls fn with every key of the list, in the order added.
func (l *FileList) Each(fn func(TaskKey)) {
	if l == nil || l.n == 0 {
		return
	}
	_ = eachListed(append(l.digest(), l.buf...), fn) // its own encoding: it decodes
}

// Len is the number of keys added.
func (l *FileList) Len() int {
	if l == nil {
		return 0
	}
	return int(l.n)
}

// digest is the stored list's first 16 bytes.
func (l *FileList) digest() []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(make([]byte, 0, 16), l.sum), l.n)
}

// decodeList adds the keys of a stored file list (the digest, then FileList's encoding) to out.
func decodeList(v []byte, out map[TaskKey]bool) error {
	return eachListed(v, func(k TaskKey) { out[k] = true })
}

// eachListed calls fn with every key of a stored file list.
func eachListed(v []byte, fn func(TaskKey)) error {
	if len(v) < 16 {
		return fmt.Errorf("file list of %d bytes: %w", len(v), ErrCorrupt)
	}
	corrupt := fmt.Errorf("file list: %w", ErrCorrupt)
	next := func() (uint64, bool) {
		n, w := binary.Uvarint(v)
		if w <= 0 {
			return 0, false
		}
		v = v[w:]
		return n, true
	}
	var envs []string
	prev := ""
	for v = v[16:]; len(v) > 0; {
		idx, ok := next()
		if !ok || idx > uint64(len(envs)) {
			return corrupt
		}
		if idx == uint64(len(envs)) {
			n, ok := next()
			if !ok || n > uint64(len(v)) {
				return corrupt
			}
			envs, v = append(envs, string(v[:n])), v[n:]
		}
		shared, ok1 := next()
		n, ok2 := next()
		if !ok1 || !ok2 || shared > uint64(len(prev)) || n > uint64(len(v)) {
			return corrupt
		}
		prev, v = prev[:shared]+string(v[:n]), v[n:]
		fn(TaskKey{envs[idx], prev})
	}
	return nil
}

// retire applies Batch.Listed, Lists and Held: every task with a catalogue row is retired when
// it is not in listed, unless a held file listed it, and returned to service when it is in
// listed. The lists that changed are stored, those of files neither listed nor held dropped. It
// returns how many tasks changed.
func (c *committer) retire(listed map[TaskKey]bool, lists map[uint64]*FileList, held []uint64) (int, error) {
	if listed == nil {
		return 0, nil
	}
	bk, err := c.tx.CreateBucketIfNotExists(bucketRetired)
	if err != nil {
		return 0, fmt.Errorf("create bucket retired: %w", err)
	}
	began := c.tx.Bucket(bucketFileLists) == nil
	fl, err := c.tx.CreateBucketIfNotExists(bucketFileLists)
	if err != nil {
		return 0, fmt.Errorf("create bucket file_lists: %w", err)
	}
	for id, l := range lists {
		if l == nil {
			l = &FileList{}
		}
		d := l.digest()
		if v := fl.Get(u64key(id)); len(v) < 16 || !bytes.Equal(v[:16], d) {
			if err := fl.Put(u64key(id), append(d, l.buf...)); err != nil {
				return 0, err
			}
		}
	}
	hold, holdAll := map[TaskKey]bool{}, false
	for _, id := range held {
		v := fl.Get(u64key(id))
		switch {
		case v == nil && began:
			if err := fl.Put(u64key(id), unknownList); err != nil {
				return 0, err
			}
			holdAll = true
		case v == nil: // never read well: it listed nothing
		case bytes.Equal(v, unknownList):
			holdAll = true
		default:
			if err := decodeList(v, hold); err != nil {
				return 0, err
			}
		}
	}
	var drop [][]byte
	if err := fl.ForEach(func(k, _ []byte) error {
		id := binary.BigEndian.Uint64(k)
		if _, ok := lists[id]; !ok && !slices.Contains(held, id) {
			drop = append(drop, k)
		}
		return nil
	}); err != nil {
		return 0, err
	}
	for _, k := range drop {
		if err := fl.Delete(k); err != nil {
			return 0, err
		}
	}
	changed := 0
	err = c.tx.Bucket(bucketCatalog).ForEachBucket(func(env []byte) error {
		return c.tx.Bucket(bucketCatalog).Bucket(env).ForEach(func(task, _ []byte) error {
			key := retiredKey(TaskKey{string(env), string(task)})
			was := bk.Get(key) != nil
			now := !listed[TaskKey{string(env), string(task)}]
			switch {
			case now && !was && (holdAll || hold[TaskKey{string(env), string(task)}]):
				return nil
			case now && !was:
				changed++
				return bk.Put(key, nil)
			case !now && was:
				changed++
				return bk.Delete(key)
			}
			return nil
		})
	})
	return changed, err
}

// unretire returns to service the tasks of catalogue rows read in this commit.
func (c *committer) unretire(rows []TaskKey) error {
	bk := c.tx.Bucket(bucketRetired)
	if bk == nil {
		return nil
	}
	for _, k := range rows {
		if key := retiredKey(k); bk.Get(key) != nil {
			if err := bk.Delete(key); err != nil {
				return err
			}
		}
	}
	return nil
}

// IsRetired reports whether task k is retired: known, and listed by no catalogue file now.
func (r *Reader) IsRetired(k TaskKey) bool {
	bk := r.tx.Bucket(bucketRetired)
	return bk != nil && bk.Get(retiredKey(k)) != nil
}

// Retired returns the retired tasks (see above); nil when there are none.
func (r *Reader) Retired() (map[TaskKey]bool, error) {
	bk := r.tx.Bucket(bucketRetired)
	if bk == nil {
		return nil, nil
	}
	var out map[TaskKey]bool
	err := bk.ForEach(func(k, _ []byte) error {
		env, task, ok := bytes.Cut(k, []byte{0})
		if !ok {
			return fmt.Errorf("retired key %q: %w", k, ErrCorrupt)
		}
		if out == nil {
			out = map[TaskKey]bool{}
		}
		out[TaskKey{string(env), string(task)}] = true
		return nil
	})
	return out, err
}

// SameFileList reports whether the stored list of catalogue file id holds the same tasks as l
// (by the digest stored with it: the sum of the keys' hashes and their count).
func (db *DB) SameFileList(id uint64, l *FileList) bool {
	same := false
	_ = db.view(func(tx *bolt.Tx) error {
		if fl := tx.Bucket(bucketFileLists); fl != nil && l != nil {
			v := fl.Get(u64key(id))
			same = len(v) >= 16 && bytes.Equal(v[:16], l.digest())
		}
		return nil
	})
	return same
}

// FileListKeys adds to out the tasks of the stored lists of the catalogue files ids, as the
// last commit that carried the catalogue's lists left them (nothing for a file without a stored
// list, or one whose list is not known).
func (db *DB) FileListKeys(ids []uint64, out map[TaskKey]bool) error {
	return db.view(func(tx *bolt.Tx) error {
		fl := tx.Bucket(bucketFileLists)
		if fl == nil {
			return nil
		}
		for _, id := range ids {
			v := fl.Get(u64key(id))
			if v == nil || bytes.Equal(v, unknownList) {
				continue
			}
			if err := decodeList(v, out); err != nil {
				return err
			}
		}
		return nil
	})
}
