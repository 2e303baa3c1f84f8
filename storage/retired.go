package storage

import (
	"bytes"
	"fmt"
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

var bucketRetired = []byte("retired")

func retiredKey(k TaskKey) []byte {
	return append(append(append(make([]byte, 0, len(k.Env)+1+len(k.Task)), k.Env...), 0), k.Task...)
}

// retire applies Batch.Listed: every task with a catalogue row is retired when it is not in
// listed and returned to service when it is. It returns how many tasks changed.
func (c *committer) retire(listed map[TaskKey]bool) (int, error) {
	if listed == nil {
		return 0, nil
	}
	bk, err := c.tx.CreateBucketIfNotExists(bucketRetired)
	if err != nil {
		return 0, fmt.Errorf("create bucket retired: %w", err)
	}
	changed := 0
	err = c.tx.Bucket(bucketCatalog).ForEachBucket(func(env []byte) error {
		return c.tx.Bucket(bucketCatalog).Bucket(env).ForEach(func(task, _ []byte) error {
			key := retiredKey(TaskKey{string(env), string(task)})
			was := bk.Get(key) != nil
			now := !listed[TaskKey{string(env), string(task)}]
			switch {
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
