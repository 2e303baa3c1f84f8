package storage

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/envsched/envsched/ledger"
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
	return db.StoreAnswerRecord(AnswerRecord{ID: id, Step: step, Answer: answer, Chosen: chosen, State: state})
}

// AnswerRecord is one answer to store, with what it predicted for the calibration ledger.
type AnswerRecord struct {
	ID     string
	Step   int64
	Answer []byte    // the answer's bytes, stored as they are
	Chosen []TaskKey // the chosen tasks, in order (a task twice when chosen twice)
	State  []byte    // the predictor state; nil leaves the stored one
	// GroupSize is the rollouts per chosen task the answer asks for; under two, Predictions
	// open nothing (no group can be degenerate)
	GroupSize int
	// Predictions are the answer's predictions per chosen task (each of Chosen), as written
	// in the answer; each opens a pending prediction in the calibration ledger, closed by
	// the Commit that completes its group (see package ledger)
	Predictions []ledger.Prediction
}

// StoreAnswerRecord is StoreAnswer with the calibration ledger: in the same transaction it
// opens a pending prediction for each of a.Predictions (see AnswerRecord), expiring the
// oldest open prediction of a task that already has ledger.MaxOpen. A prediction for a task
// not in a.Chosen is an error, and nothing is stored.
func (db *DB) StoreAnswerRecord(a AnswerRecord) error {
	id, step, answer, chosen, state := a.ID, a.Step, a.Answer, a.Chosen, a.State
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	var logged logWrite
	var counts *countsTx
	err := db.update(func(tx *bolt.Tx) error {
		counts = nil
		if err := db.tasks.load(tx, &db.logCache); err != nil {
			return err
		}
		rb := tx.Bucket(bucketRequests)
		if rb.Get([]byte(id)) != nil {
			return fmt.Errorf("answer %q is already stored", id)
		}
		if err := putAnswer(tx, rb, id, answer); err != nil {
			return err
		}
		var err error
		var recs map[TaskKey]taskRecord
		if logged, recs, err = markChosen(tx, &db.tasks, step, chosen); err != nil {
			return err
		}
		if err := putPredictorState(tx, state); err != nil {
			return err
		}
		seq, err := bumpRequests(tx, id, step)
		if err != nil || len(a.Predictions) == 0 {
			return err
		}
		if err := db.opens.load(tx); err != nil {
			return err
		}
		counts = db.opens.begin()
		return openPredictions(tx, seq, a, recs, counts)
	})
	if err != nil {
		return fmt.Errorf("store answer %q in %s: %w", id, db.path, err)
	}
	db.tasks.apply(logged)
	db.opens.commit(counts)
	db.publish(logged)
	db.ids.answered(db)
	return nil
}

// openPredictions opens a's predictions in the calibration ledger; answer is a's order. The
// journal's oldest answer is filed first when it holds journalAnswers answers.
func openPredictions(tx *bolt.Tx, answer uint64, a AnswerRecord, recs map[TaskKey]taskRecord, counts *countsTx) error {
	if err := markSchema(tx, schemaAnswerParts); err != nil {
		return err
	}
	ct, err := openCalib(tx, true)
	if err != nil {
		return err
	}
	if counts.answers >= journalAnswers {
		if err := ct.fileOldest(); err != nil {
			return err
		}
		counts.answers--
	}
	if err := ct.openAnswer(answer, a.ID, a.Step, a.GroupSize, a.Predictions, recs, counts); err != nil {
		return err
	}
	return ct.flush()
}

// markChosen counts the choice of each chosen task and returns their records as they were
// before (by key), with the write to apply to the overlay.
func markChosen(tx *bolt.Tx, o *taskOverlay, step int64, chosen []TaskKey) (logWrite, map[TaskKey]taskRecord, error) {
	recs := make([]keyedRecord, 0, len(chosen))
	at := map[TaskKey]int{}
	before := make(map[TaskKey]taskRecord, len(chosen))
	for _, k := range chosen {
		i, seen := at[k]
		if !seen {
			rec, ok, err := loadTaskRecord(tx, o, k)
			if err != nil {
				return logWrite{}, nil, err
			}
			if !ok {
				return logWrite{}, nil, fmt.Errorf("chosen task %s/%s: %w", k.Env, k.Task, ErrNotFound)
			}
			i = len(recs)
			at[k] = i
			before[k] = rec
			recs = append(recs, keyedRecord{k, rec})
		}
		recs[i].rec.Stats.Chosen++
		recs[i].rec.Stats.LastChosen = step
	}
	logged, err := writeTaskRecords(tx, o, recs)
	return logged, before, err
}

// bumpRequests counts one more answer and returns its order (requests answered, with it).
func bumpRequests(tx *bolt.Tx, id string, step int64) (uint64, error) {
	c, err := readCounters(tx)
	if err != nil {
		return 0, err
	}
	c.RequestsAnswered++
	c.LastRequest = id
	if step > c.Round {
		c.Round = step
	}
	return uint64(c.RequestsAnswered), writeCounters(tx, c)
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
