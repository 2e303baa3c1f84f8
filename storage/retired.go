package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
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
// Which catalogue files list each task is kept too, in bucket "listed_by" (ENV 0x00 TASK ->
// the FileState IDs of the files, 8 bytes big-endian each), as of the last list that named it: a
// catalogue file that cannot be read now, or lists no task (Batch.Held), then holds back exactly
// the tasks it listed when it last could be read, and other files' tasks retire as usual. The
// bucket is created by the first commit with a list; tasks it does not name (listed only before
// this build) are held while any file is.

var (
	bucketRetired  = []byte("retired")
	bucketListedBy = []byte("listed_by")
)

func retiredKey(k TaskKey) []byte {
	return append(append(append(make([]byte, 0, len(k.Env)+1+len(k.Task)), k.Env...), 0), k.Task...)
}

// retire applies Batch.Listed and Batch.Held: every task with a catalogue row is retired when
// it is not in listed, unless a held file listed it (or held is not empty and nothing says which
// files listed it), and returned to service when it is in listed. The files that list each
// listed task are stored in listed_by when they changed. It returns how many tasks changed.
func (c *committer) retire(listed map[TaskKey]string, held []uint64) (int, error) {
	if listed == nil {
		return 0, nil
	}
	bk, err := c.tx.CreateBucketIfNotExists(bucketRetired)
	if err != nil {
		return 0, fmt.Errorf("create bucket retired: %w", err)
	}
	by, err := c.tx.CreateBucketIfNotExists(bucketListedBy)
	if err != nil {
		return 0, fmt.Errorf("create bucket listed_by: %w", err)
	}
	heldBy := func(key []byte) bool {
		if len(held) == 0 {
			return false
		}
		v := by.Get(key)
		if v == nil {
			return true // listed before files were recorded: which file is not known
		}
		for ; len(v) >= 8; v = v[8:] {
			if slices.Contains(held, binary.BigEndian.Uint64(v)) {
				return true
			}
		}
		return false
	}
	changed := 0
	err = c.tx.Bucket(bucketCatalog).ForEachBucket(func(env []byte) error {
		return c.tx.Bucket(bucketCatalog).Bucket(env).ForEach(func(task, _ []byte) error {
			key := retiredKey(TaskKey{string(env), string(task)})
			was := bk.Get(key) != nil
			files, ok := listed[TaskKey{string(env), string(task)}]
			now := !ok
			if ok && string(by.Get(key)) != files {
				if err := by.Put(key, []byte(files)); err != nil {
					return err
				}
			}
			switch {
			case now && !was && heldBy(key):
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
