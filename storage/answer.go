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
//
// state, when not nil, replaces the predictor state in the same transaction (see
// Reader.PredictorState): what the scheduler knew when it answered is durable exactly when the
// answer is. A nil state leaves the stored one as it is.
func (db *DB) StoreAnswer(id string, step int64, answer []byte, chosen []TaskKey, state []byte) error {
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	var logged logWrite
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		if err := db.tasks.load(tx); err != nil {
			return err
		}
		rb := tx.Bucket(bucketRequests)
		if rb.Get([]byte(id)) != nil {
			return fmt.Errorf("answer %q is already stored", id)
		}
		if err := rb.Put([]byte(id), answer); err != nil {
			return err
		}
		var err error
		if logged, err = markChosen(tx, &db.tasks, step, chosen); err != nil {
			return err
		}
		if err := putPredictorState(tx, state); err != nil {
			return err
		}
		return bumpRequests(tx, id, step)
	})
	if err != nil {
		return fmt.Errorf("store answer %q in %s: %w", id, db.path, err)
	}
	db.tasks.apply(logged)
	db.publish(logged)
	db.ids.answered(db.bolt)
	return nil
}

func markChosen(tx *bolt.Tx, o *taskOverlay, step int64, chosen []TaskKey) (logWrite, error) {
	recs := make([]keyedRecord, 0, len(chosen))
	at := map[TaskKey]int{}
	for _, k := range chosen {
		i, seen := at[k]
		if !seen {
			rec, ok, err := loadTaskRecord(tx, o, k)
			if err != nil {
				return logWrite{}, err
			}
			if !ok {
				return logWrite{}, fmt.Errorf("chosen task %s/%s: %w", k.Env, k.Task, ErrNotFound)
			}
			i = len(recs)
			at[k] = i
			recs = append(recs, keyedRecord{k, rec})
		}
		recs[i].rec.Stats.Chosen++
		recs[i].rec.Stats.LastChosen = step
	}
	return writeTaskRecords(tx, o, recs)
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

// metaPredictorState is the key of the predictor state in the meta bucket. It is absent from
// databases that never stored one (older ones included), so it needs no migration.
var metaPredictorState = []byte("predictor_state")

func putPredictorState(tx *bolt.Tx, state []byte) error {
	if state == nil {
		return nil
	}
	if err := tx.Bucket(bucketMeta).Put(metaPredictorState, state); err != nil {
		return fmt.Errorf("put predictor state: %w", err)
	}
	return nil
}
