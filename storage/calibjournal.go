package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/envsched/envsched/ledger"
)

// The predictions an answer opens are not put into calib/pending (keyed by task, so 512 of them
// landed on as many pages, each rewritten and fsync'd with the answer) but appended to the
// journal calib/opening, in order:
//
//	opening  answer (8 bytes BE), part (4 bytes BE) -> task seq, rank, encoded ledger.Pending (each)
//
// and filed into pending by the next Commit that stores rollouts (before it offers them to the
// open predictions); an answer that finds journalAnswers answers journaled files the oldest
// (so a trainer that never writes rollouts pays, from then on, what every answer paid before,
// and no answer files many at once). Filing
// replays the answers' opens in order, the oldest open prediction of a task that has
// ledger.MaxOpen expiring, so pending ends exactly as if each had been put at its answer. The
// totals are counted at the answer, as before: Expired there comes from the task's open
// predictions, pending and journaled (openCounts). A database with a journal is schema 2.
var calibOpening = []byte("opening")

const (
	journalPartBytes = 900 // under a quarter page: see taskLogPart
	journalAnswers   = 32  // answers journaled at most: bounds the journal, its replay and a commit's filing
)

// openCounts is the writer's count of open predictions of each task that has journaled ones
// (filed or not): the count once the journal is filed. It is loaded at the first answer after
// opening (replaying the journal) and changed only after a transaction commits.
type openCounts struct {
	loaded  bool
	n       map[uint64]int // by task seq
	answers int            // answers in the journal
}

// countsTx is what one transaction changes of openCounts.
type countsTx struct {
	base    *openCounts
	n       map[uint64]int
	answers int
	filed   bool // the journal was filed: base's counts are pending's now
}

func (o *openCounts) begin() *countsTx {
	return &countsTx{base: o, n: map[uint64]int{}, answers: o.answers}
}

// commit applies a committed transaction's changes.
func (o *openCounts) commit(c *countsTx) {
	if c == nil {
		return
	}
	if c.filed {
		o.n = map[uint64]int{}
	}
	for k, v := range c.n {
		o.n[k] = v
	}
	o.answers = c.answers
}

// count is the number of open predictions of task seq once the journal is filed.
func (c *countsTx) count(ct *calibTx, seq uint64) (int, error) {
	if n, ok := c.n[seq]; ok {
		return n, nil
	}
	if n, ok := c.base.n[seq]; ok && !c.filed {
		return n, nil
	}
	return ct.pendingCount(seq)
}

// admit counts one more open prediction of task seq, expiring the oldest when it has MaxOpen;
// it returns how many expired.
func (c *countsTx) admit(ct *calibTx, seq uint64) (int64, error) {
	n, err := c.count(ct, seq)
	if err != nil {
		return 0, err
	}
	var expired int64
	if n >= ledger.MaxOpen {
		expired = int64(n - ledger.MaxOpen + 1)
		n = ledger.MaxOpen - 1
	}
	c.n[seq] = n + 1
	return expired, nil
}

// pendingCount is the number of predictions of task seq in pending.
func (ct *calibTx) pendingCount(seq uint64) (int, error) {
	n, prefix := 0, u64key(seq)
	cur := ct.pending().Cursor()
	for k, _ := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = cur.Next() {
		n++
	}
	return n, nil
}

// journal is the bucket calib/opening, made when missing if create.
func (ct *calibTx) journal(create bool) (*bolt.Bucket, error) {
	if jb := ct.bk.Bucket(calibOpening); jb != nil || !create {
		return jb, nil
	}
	jb, err := ct.bk.CreateBucket(calibOpening)
	if err != nil {
		return nil, fmt.Errorf("create bucket calib/%s: %w", calibOpening, err)
	}
	return jb, nil
}

// journalEntry is one journaled prediction.
type journalEntry struct {
	answer, taskSeq uint64
	rank            int
	pending         []byte // encodePending's form
}

func appendJournalEntry(e enc, taskSeq uint64, rank int, pending []byte) enc {
	return e.uvar(taskSeq).uvar(uint64(rank)).bytes(pending)
}

// eachJournaled calls fn for every journaled prediction, in the order they were opened.
func eachJournaled(jb *bolt.Bucket, fn func(journalEntry) error) error {
	if jb == nil {
		return nil
	}
	return jb.ForEach(func(k, v []byte) error { return eachEntry(k, v, fn) })
}

// eachEntry calls fn for every prediction of the journal's part k, v.
func eachEntry(k, v []byte, fn func(journalEntry) error) error {
	if len(k) != 12 {
		return fmt.Errorf("journaled predictions key %x: %w", k, ErrCorrupt)
	}
	d := dec{b: v}
	for len(d.b) > 0 {
		e := journalEntry{answer: binary.BigEndian.Uint64(k), taskSeq: d.uvar(), rank: int(d.uvar()), pending: d.bytes()}
		if d.bad {
			return fmt.Errorf("journaled predictions %x: %w", k, ErrCorrupt)
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// journalWriter appends one answer's predictions to the journal in parts.
type journalWriter struct {
	jb     *bolt.Bucket
	answer uint64
	part   uint32
	buf    enc
}

func (w *journalWriter) add(taskSeq uint64, rank int, pending []byte) error {
	entry := appendJournalEntry(nil, taskSeq, rank, pending)
	if len(w.buf) > 0 && len(w.buf)+len(entry) > journalPartBytes {
		if err := w.flush(); err != nil {
			return err
		}
	}
	w.buf = append(w.buf, entry...)
	return nil
}

func (w *journalWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	key := binary.BigEndian.AppendUint32(u64key(w.answer), w.part)
	w.jb.FillPercent = 1
	if err := w.jb.Put(key, w.buf); err != nil {
		return fmt.Errorf("put journaled predictions: %w", err)
	}
	w.part++
	w.buf = nil
	return nil
}

// file puts every journaled prediction into pending, expiring as each answer did (without
// counting: the answer counted), and empties the journal. It reports whether there was any.
func (ct *calibTx) file() (bool, error) {
	if ct.bk == nil {
		return false, nil
	}
	jb, err := ct.journal(false)
	if err != nil || jb == nil {
		return false, err
	}
	if k, _ := jb.Cursor().First(); k == nil {
		return false, nil
	}
	if err := eachJournaled(jb, ct.fileEntry); err != nil {
		return false, err
	}
	if err := ct.bk.DeleteBucket(calibOpening); err != nil {
		return false, fmt.Errorf("empty calib/%s: %w", calibOpening, err)
	}
	return true, nil
}

// fileOldest files the predictions of the oldest journaled answer alone (see file); the
// counts once the journal is filed stay as they were.
func (ct *calibTx) fileOldest() error {
	jb, err := ct.journal(false)
	if err != nil || jb == nil {
		return err
	}
	cur := jb.Cursor()
	k, _ := cur.First()
	if k == nil {
		return nil
	}
	prefix := bytes.Clone(k[:8])
	var parts [][]byte
	for ; k != nil && bytes.HasPrefix(k, prefix); k, _ = cur.Next() {
		parts = append(parts, bytes.Clone(k))
	}
	for _, k := range parts {
		if err := eachEntry(k, jb.Get(k), ct.fileEntry); err != nil {
			return err
		}
		if err := jb.Delete(k); err != nil {
			return fmt.Errorf("file journaled predictions %x: %w", k, err)
		}
	}
	return nil
}

// fileEntry puts one journaled prediction into pending, expiring the task's oldest when it
// has MaxOpen.
func (ct *calibTx) fileEntry(e journalEntry) error {
	if err := ct.expireFor(e.taskSeq); err != nil {
		return err
	}
	if err := ct.pending().Put(pendingKey(e.taskSeq, e.answer, e.rank), bytes.Clone(e.pending)); err != nil {
		return fmt.Errorf("file journaled prediction: %w", err)
	}
	return nil
}

// replayJournal is the journal's effect on pending, without filing it: the open count of each
// task it holds predictions of once filed, the predictions it holds, the answers they are of
// and how many of the predictions in pending or in it filing would expire.
func (ct *calibTx) replayJournal() (counts map[uint64]int, entries, answers int, expire int64, err error) {
	c := (&openCounts{n: map[uint64]int{}}).begin()
	c.filed = true
	jb, err := ct.journal(false)
	if err != nil || ct.bk == nil {
		return c.n, 0, 0, 0, err
	}
	last := uint64(0)
	err = eachJournaled(jb, func(e journalEntry) error {
		if entries == 0 || e.answer != last {
			answers++
			last = e.answer
		}
		entries++
		n, err := c.admit(ct, e.taskSeq)
		expire += n
		return err
	})
	return c.n, entries, answers, expire, err
}

// load replays the journal into o, once after opening.
func (o *openCounts) load(tx *bolt.Tx) error {
	if o.loaded {
		return nil
	}
	ct, err := openCalib(tx, false)
	if err != nil {
		return err
	}
	o.n = map[uint64]int{}
	if ct.bk != nil {
		if o.n, _, o.answers, _, err = ct.replayJournal(); err != nil {
			return err
		}
	}
	o.loaded = true
	return nil
}

// checkJournal checks the journaled predictions (each has an empty group) and returns the
// number that will be open once they are filed, less those of pending that filing expires.
func checkJournal(r *Reader) (open int64, errs []error) {
	ct, err := openCalib(r.tx, false)
	if err != nil || ct.bk == nil {
		return 0, nil
	}
	jb, _ := ct.journal(false)
	err = eachJournaled(jb, func(e journalEntry) error {
		p, err := decodePending(pendingKey(e.taskSeq, e.answer, e.rank), e.pending)
		if err != nil {
			return err
		}
		if p.N != 0 {
			errs = append(errs, fmt.Errorf("calibration: journaled prediction of task %d, answer %d has %d rollouts", e.taskSeq, e.answer, p.N))
		}
		return nil
	})
	if err != nil {
		return 0, append(errs, err)
	}
	_, entries, _, expire, err := ct.replayJournal()
	if err != nil {
		return 0, append(errs, err)
	}
	return int64(entries) - expire, errs
}
