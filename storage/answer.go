package storage

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// StoreAnswer stores the answer to request id in one fsync'd transaction, together with what
// answering changes: requests_answered is incremented, last_request becomes id, the current
// round becomes step (when step is later than it), and each chosen task's Chosen count and
// LastChosen step are updated. A chosen task that is not stored is an error wrapping
// ErrNotFound, and nothing is stored. Storing an id that is already stored is an error: an
// answer never changes.
func (db *DB) StoreAnswer(id string, step int64, answer []byte, chosen []TaskKey) error {
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		rb := tx.Bucket(bucketRequests)
		if rb.Get([]byte(id)) != nil {
			return fmt.Errorf("answer %q is already stored", id)
		}
		if err := rb.Put([]byte(id), answer); err != nil {
			return err
		}
		if err := markChosen(tx, step, chosen); err != nil {
			return err
		}
		return bumpRequests(tx, id, step)
	})
	if err != nil {
		return fmt.Errorf("store answer %q in %s: %w", id, db.path, err)
	}
	return nil
}

func markChosen(tx *bolt.Tx, step int64, chosen []TaskKey) error {
	tb := tx.Bucket(bucketTasks)
	for _, k := range chosen {
		eb := tb.Bucket([]byte(k.Env))
		var v []byte
		if eb != nil {
			v = eb.Get([]byte(k.Task))
		}
		if v == nil {
			return fmt.Errorf("chosen task %s/%s: %w", k.Env, k.Task, ErrNotFound)
		}
		rec, err := decodeTaskRecord(v)
		if err != nil {
			return fmt.Errorf("task %s/%s: %w", k.Env, k.Task, err)
		}
		rec.Stats.Chosen++
		rec.Stats.LastChosen = step
		if err := eb.Put([]byte(k.Task), rec.encode(nil)); err != nil { // fresh: bbolt keeps it
			return err
		}
	}
	return nil
}

func bumpRequests(tx *bolt.Tx, id string, step int64) error {
	c, err := readCounters(tx)
	if err != nil {
		return err
	}
	c.RequestsAnswered++
	c.LastRequest = id
	if step > c.Round {
		c.Round = step
	}
	return writeCounters(tx, c)
}
