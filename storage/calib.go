package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/envsched/envsched/ledger"
)

// The calibration ledger (package ledger) lives in the bucket calib, created by the first
// answer stored with predictions; a database without it has measured nothing, and needs no
// migration. Its sub-buckets:
//
//	pending  task seq, answer, rank (8+8+4 bytes BE) -> ledger.Pending: predictions waiting for their group
//	cells    env \x00 channel -> ledger.Cell
//	bins     channel, bin -> ledger.Cell: the reliability table
//	answers  answer (8 bytes BE) -> request, step, picks, ledger.Cell
//
// and the key totals (opened, measured, expired, unmatched, restarted). A prediction is opened in the
// transaction that stores its answer, and closed (its group counted) in the Commit that stores
// the group's last rollout: so a group is measured exactly once, however its rollouts arrive.
var (
	bucketCalib    = []byte("calib")
	calibPending   = []byte("pending")
	calibCells     = []byte("cells")
	calibBins      = []byte("bins")
	calibAnswers   = []byte("answers")
	calibTotalsKey = []byte("totals")
)

func pendingKey(taskSeq, answer uint64, rank int) []byte {
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 20), taskSeq)
	k = binary.BigEndian.AppendUint64(k, answer)
	return binary.BigEndian.AppendUint32(k, uint32(rank))
}

func encodePending(buf []byte, p ledger.Pending) []byte {
	return enc(buf[:0]).str(p.Request).svar(p.Step).u8(uint8(p.Channel)).uvar(uint64(p.GroupSize)).
		f64(p.PDegenerate).f64(p.Mean).uvar(uint64(p.N)).f64(p.Min).f64(p.Max).f64(p.Sum).str(p.Group)
}

func decodePending(key, v []byte) (ledger.Pending, error) {
	if len(key) != 20 {
		return ledger.Pending{}, fmt.Errorf("pending key %x: %w", key, ErrCorrupt)
	}
	d := dec{b: v}
	p := ledger.Pending{Answer: binary.BigEndian.Uint64(key[8:]), Rank: int(binary.BigEndian.Uint32(key[16:])),
		Request: d.str(), Step: d.svar(), Channel: ledger.Channel(d.u8()), GroupSize: int(d.uvar()),
		PDegenerate: d.f64(), Mean: d.f64(), N: int64(d.uvar()), Min: d.f64(), Max: d.f64(), Sum: d.f64()}
	if len(d.b) > 0 { // written without the group key by the first version of the ledger
		p.Group = d.str()
	}
	if d.bad || p.Channel >= ledger.NumChannels {
		return ledger.Pending{}, fmt.Errorf("pending %x: %w", key, ErrCorrupt)
	}
	return p, nil
}

func (e enc) cell(c ledger.Cell) enc {
	return e.uvar(uint64(c.Groups)).uvar(uint64(c.Degenerate)).f64(c.PredDegenerate).f64(c.PredMean).
		f64(c.RealMean).uvar(uint64(c.Rollouts))
}

func (d *dec) cell() ledger.Cell {
	return ledger.Cell{Groups: int64(d.uvar()), Degenerate: int64(d.uvar()), PredDegenerate: d.f64(),
		PredMean: d.f64(), RealMean: d.f64(), Rollouts: int64(d.uvar())}
}

func decodeCell(v []byte) (ledger.Cell, error) {
	d := dec{b: v}
	c := d.cell()
	if d.bad {
		return ledger.Cell{}, fmt.Errorf("calibration cell: %w", ErrCorrupt)
	}
	return c, nil
}

func encodeAnswerCell(a ledger.AnswerCell) []byte {
	return enc(nil).str(a.Request).svar(a.Step).uvar(uint64(a.Picks)).cell(a.Cell)
}

func decodeAnswerCell(key, v []byte) (ledger.AnswerCell, error) {
	d := dec{b: v}
	a := ledger.AnswerCell{Request: d.str(), Step: d.svar(), Picks: int64(d.uvar()), Cell: d.cell()}
	if d.bad || len(key) != 8 {
		return ledger.AnswerCell{}, fmt.Errorf("answer calibration %x: %w", key, ErrCorrupt)
	}
	a.Answer = binary.BigEndian.Uint64(key)
	return a, nil
}

func encodeTotals(t ledger.Totals) []byte {
	return enc(nil).uvar(uint64(t.Opened)).uvar(uint64(t.Measured)).uvar(uint64(t.Expired)).uvar(uint64(t.Unmatched)).
		uvar(uint64(t.Restarted))
}

func decodeTotals(v []byte) (ledger.Totals, error) {
	if v == nil {
		return ledger.Totals{}, nil
	}
	d := dec{b: v}
	t := ledger.Totals{Opened: int64(d.uvar()), Measured: int64(d.uvar()), Expired: int64(d.uvar()), Unmatched: int64(d.uvar())}
	if len(d.b) > 0 { // written without it by the first version of the ledger
		t.Restarted = int64(d.uvar())
	}
	if d.bad {
		return ledger.Totals{}, fmt.Errorf("calibration totals: %w", ErrCorrupt)
	}
	return t, nil
}

func cellKey(env string, ch ledger.Channel) []byte {
	return append(append([]byte(env), 0), byte(ch))
}

// calibTx is the ledger as one write transaction changes it: cells, bins, answers and totals
// are loaded once, changed in memory and written once by flush.
type calibTx struct {
	bk      *bolt.Bucket // nil: no ledger in this database
	totals  ledger.Totals
	cells   map[string]*ledger.Cell // by cells key
	corder  []string
	bins    map[[2]byte]*ledger.Cell
	answers map[uint64]*ledger.AnswerCell
	aorder  []uint64
	buf     []byte
	dirty   bool // a rollout reached an open prediction: flush has something to write
}

// openCalib returns the ledger of tx; create makes its buckets when missing (answers create
// them, commits only use them).
func openCalib(tx *bolt.Tx, create bool) (*calibTx, error) {
	ct := &calibTx{cells: map[string]*ledger.Cell{}, bins: map[[2]byte]*ledger.Cell{}, answers: map[uint64]*ledger.AnswerCell{}}
	ct.bk = tx.Bucket(bucketCalib)
	if ct.bk == nil && create {
		var err error
		if ct.bk, err = tx.CreateBucket(bucketCalib); err != nil {
			return nil, fmt.Errorf("create bucket calib: %w", err)
		}
		for _, name := range [][]byte{calibPending, calibCells, calibBins, calibAnswers} {
			if _, err := ct.bk.CreateBucket(name); err != nil {
				return nil, fmt.Errorf("create bucket calib/%s: %w", name, err)
			}
		}
	}
	if ct.bk == nil {
		return ct, nil
	}
	var err error
	ct.totals, err = decodeTotals(ct.bk.Get(calibTotalsKey))
	return ct, err
}

func (ct *calibTx) pending() *bolt.Bucket { return ct.bk.Bucket(calibPending) }

// pendingOf reads the open predictions of the task with seq taskSeq, oldest first.
func (ct *calibTx) pendingOf(taskSeq uint64) ([]openPrediction, error) {
	var out []openPrediction
	prefix := u64key(taskSeq)
	cur := ct.pending().Cursor()
	for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
		p, err := decodePending(k, v)
		if err != nil {
			return nil, err
		}
		out = append(out, openPrediction{key: bytes.Clone(k), p: p})
	}
	return out, nil
}

// openPrediction is one pending prediction as a transaction changes it.
type openPrediction struct {
	key     []byte
	p       ledger.Pending
	dirty   bool
	deleted bool
}

// offer gives one rollout sr (normalised reward r) to the first open prediction it answers, and
// counts the group when that completes it. When none answers it but one of its batch has begun
// a group under another key, that group begins again with it (a replayed step); when the task
// has open predictions and none is of its batch, the rollout is counted as unmatched.
func (ct *calibTx) offer(env string, open []openPrediction, r float64, sr *StoredRollout) error {
	live, restart := false, -1
	for i := range open {
		op := &open[i]
		if op.deleted {
			continue
		}
		live = true
		if op.p.Matches(sr.RequestID, sr.Step, sr.HasStep, sr.Group) {
			return ct.fill(env, op, r, sr.Group)
		}
		if restart < 0 && op.p.SameBatch(sr.RequestID, sr.Step, sr.HasStep) {
			restart = i
		}
	}
	if restart >= 0 {
		ct.totals.Restarted++
		open[restart].p.Restart()
		return ct.fill(env, &open[restart], r, sr.Group)
	}
	if live {
		ct.totals.Unmatched++
	}
	return nil
}

// fill adds one rollout to op's group and counts the group when it is complete.
func (ct *calibTx) fill(env string, op *openPrediction, r float64, group string) error {
	op.dirty = true
	if op.p.Add(r, group) {
		op.deleted = true
		return ct.count(env, op.p)
	}
	return nil
}

// count adds the outcome of a completed prediction to its environment's cell, its bin and its
// answer.
func (ct *calibTx) count(env string, p ledger.Pending) error {
	o := p.Outcome()
	ct.totals.Measured++
	c, err := ct.cell(env, o.Channel)
	if err != nil {
		return err
	}
	c.Add(o)
	b, err := ct.bin(o.Channel, ledger.BinOf(o.PDegenerate))
	if err != nil {
		return err
	}
	b.Add(o)
	a, err := ct.answer(p.Answer)
	if err != nil {
		return err
	}
	a.Cell.Add(o)
	return nil
}

func (ct *calibTx) cell(env string, ch ledger.Channel) (*ledger.Cell, error) {
	k := string(cellKey(env, ch))
	if c := ct.cells[k]; c != nil {
		return c, nil
	}
	c := new(ledger.Cell)
	if v := ct.bk.Bucket(calibCells).Get([]byte(k)); v != nil {
		var err error
		if *c, err = decodeCell(v); err != nil {
			return nil, err
		}
	}
	ct.cells[k] = c
	ct.corder = append(ct.corder, k)
	return c, nil
}

func (ct *calibTx) bin(ch ledger.Channel, bin int) (*ledger.Cell, error) {
	k := [2]byte{byte(ch), byte(bin)}
	if c := ct.bins[k]; c != nil {
		return c, nil
	}
	c := new(ledger.Cell)
	if v := ct.bk.Bucket(calibBins).Get(k[:]); v != nil {
		var err error
		if *c, err = decodeCell(v); err != nil {
			return nil, err
		}
	}
	ct.bins[k] = c
	return c, nil
}

func (ct *calibTx) answer(seq uint64) (*ledger.AnswerCell, error) {
	if a := ct.answers[seq]; a != nil {
		return a, nil
	}
	a := &ledger.AnswerCell{Answer: seq}
	if v := ct.bk.Bucket(calibAnswers).Get(u64key(seq)); v != nil {
		var err error
		if *a, err = decodeAnswerCell(u64key(seq), v); err != nil {
			return nil, err
		}
	}
	ct.answers[seq] = a
	ct.aorder = append(ct.aorder, seq)
	return a, nil
}

// putOpen writes the changed predictions of one task: completed ones are deleted.
func (ct *calibTx) putOpen(open []openPrediction) error {
	pb := ct.pending()
	for i := range open {
		op := &open[i]
		var err error
		switch {
		case op.deleted:
			err = pb.Delete(op.key)
		case op.dirty:
			ct.buf = encodePending(ct.buf, op.p)
			err = pb.Put(op.key, bytes.Clone(ct.buf))
		}
		if err != nil {
			return fmt.Errorf("put pending prediction %x: %w", op.key, err)
		}
		op.dirty = false
	}
	return nil
}

// flush writes the changed cells, bins, answers and the totals.
func (ct *calibTx) flush() error {
	if ct.bk == nil {
		return nil
	}
	for _, k := range ct.corder {
		if err := ct.bk.Bucket(calibCells).Put([]byte(k), enc(nil).cell(*ct.cells[k])); err != nil {
			return fmt.Errorf("put calibration cell: %w", err)
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(ct.bins), func(a, b [2]byte) int { return bytes.Compare(a[:], b[:]) }) {
		if err := ct.bk.Bucket(calibBins).Put([]byte{k[0], k[1]}, enc(nil).cell(*ct.bins[k])); err != nil {
			return fmt.Errorf("put calibration bin: %w", err)
		}
	}
	for _, seq := range ct.aorder {
		if err := ct.bk.Bucket(calibAnswers).Put(u64key(seq), encodeAnswerCell(*ct.answers[seq])); err != nil {
			return fmt.Errorf("put answer calibration: %w", err)
		}
	}
	if err := ct.bk.Put(calibTotalsKey, encodeTotals(ct.totals)); err != nil {
		return fmt.Errorf("put calibration totals: %w", err)
	}
	return nil
}

// openAnswer opens the predictions of one stored answer: answer is its order, chosen its
// tasks' records by key. They are journaled (see calibjournal.go); a task with MaxOpen open
// predictions loses its oldest (counted expired now, removed when the journal is filed).
func (ct *calibTx) openAnswer(answer uint64, id string, step int64, groupSize int, preds []ledger.Prediction,
	recs map[TaskKey]taskRecord, counts *countsTx) error {
	a, err := ct.answer(answer)
	if err != nil {
		return err
	}
	a.Request, a.Step = id, step
	jb, err := ct.journal(true)
	if err != nil {
		return err
	}
	w := journalWriter{jb: jb, answer: answer}
	for _, pr := range preds {
		rec, ok := recs[TaskKey{pr.Env, pr.Task}]
		if !ok {
			return fmt.Errorf("prediction for %s/%s, which the answer did not choose: %w", pr.Env, pr.Task, ErrNotFound)
		}
		p, ok := ledger.Open(pr, answer, id, step, groupSize, rec.Stats.Rollouts)
		if !ok {
			continue
		}
		expired, err := counts.admit(ct, rec.Seq)
		if err != nil {
			return err
		}
		ct.totals.Expired += expired
		ct.buf = encodePending(ct.buf, p)
		if err := w.add(rec.Seq, pr.Rank, ct.buf); err != nil {
			return err
		}
		ct.totals.Opened++
		a.Picks++
	}
	if a.Picks > 0 {
		counts.answers++
	}
	return w.flush()
}

// expireFor makes room in pending for one more open prediction of the task with seq taskSeq
// (filing the journal: the answers counted what expires).
func (ct *calibTx) expireFor(taskSeq uint64) error {
	open, err := ct.pendingOf(taskSeq)
	if err != nil {
		return err
	}
	for i := 0; i+ledger.MaxOpen <= len(open); i++ {
		if err := ct.pending().Delete(open[i].key); err != nil {
			return fmt.Errorf("expire pending prediction %x: %w", open[i].key, err)
		}
	}
	return nil
}

// Calibration reads the calibration ledger with its last lastAnswers answers (none when 0).
// A database that never stored an answer with predictions has an empty one.
func (r *Reader) Calibration(lastAnswers int) (ledger.Ledger, error) {
	cal := ledger.Ledger{Cells: map[string]*[ledger.NumChannels]ledger.Cell{}}
	bk := r.tx.Bucket(bucketCalib)
	if bk == nil {
		return cal, nil
	}
	var err error
	if cal.Totals, err = decodeTotals(bk.Get(calibTotalsKey)); err != nil {
		return cal, err
	}
	if err := readCells(bk.Bucket(calibCells), cal.Cells); err != nil {
		return cal, err
	}
	if err := readBins(bk.Bucket(calibBins), &cal.Bins); err != nil {
		return cal, err
	}
	cal.Answers, err = readLastAnswers(bk.Bucket(calibAnswers), lastAnswers)
	return cal, err
}

func readCells(bk *bolt.Bucket, out map[string]*[ledger.NumChannels]ledger.Cell) error {
	return bk.ForEach(func(k, v []byte) error {
		i := len(k) - 2 // env \x00 channel; env may hold any byte
		if i < 0 || k[i] != 0 || ledger.Channel(k[i+1]) >= ledger.NumChannels {
			return fmt.Errorf("calibration cell key %x: %w", k, ErrCorrupt)
		}
		c, err := decodeCell(v)
		if err != nil {
			return err
		}
		env := string(k[:i])
		if out[env] == nil {
			out[env] = new([ledger.NumChannels]ledger.Cell)
		}
		out[env][k[i+1]] = c
		return nil
	})
}

func readBins(bk *bolt.Bucket, out *[ledger.NumChannels][ledger.Bins]ledger.Cell) error {
	return bk.ForEach(func(k, v []byte) error {
		if len(k) != 2 || ledger.Channel(k[0]) >= ledger.NumChannels || int(k[1]) >= ledger.Bins {
			return fmt.Errorf("calibration bin key %x: %w", k, ErrCorrupt)
		}
		c, err := decodeCell(v)
		out[k[0]][k[1]] = c
		return err
	})
}

// readLastAnswers reads the last n answers, oldest first.
func readLastAnswers(bk *bolt.Bucket, n int) ([]ledger.AnswerCell, error) {
	var out []ledger.AnswerCell
	cur := bk.Cursor()
	for k, v := cur.Last(); k != nil && len(out) < n; k, v = cur.Prev() {
		a, err := decodeAnswerCell(k, v)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	slices.Reverse(out)
	return out, nil
}

// Calibration reads the calibration ledger in its own read transaction (see
// Reader.Calibration).
func (db *DB) Calibration(lastAnswers int) (cal ledger.Ledger, err error) {
	err = db.View(func(r *Reader) error { cal, err = r.Calibration(lastAnswers); return err })
	return cal, err
}

// checkCalib checks the ledger's invariants: the measured groups are counted the same in the
// totals, the cells, the bins and the answers; every prediction still open is counted open
// and has an incomplete group.
func checkCalib(r *Reader) []error {
	cal, err := r.Calibration(math.MaxInt)
	if err != nil {
		return []error{err}
	}
	var errs []error
	var bins ledger.Cell
	for ch := range cal.Bins {
		for _, b := range cal.Bins[ch] {
			bins.Merge(b)
		}
	}
	cells, answers := cal.Total(), cal.Recent()
	for what, n := range map[string]int64{"cells": cells.Groups, "bins": bins.Groups, "answers": answers.Groups} {
		if n != cal.Totals.Measured {
			errs = append(errs, fmt.Errorf("calibration: %d groups measured, %s count %d", cal.Totals.Measured, what, n))
		}
	}
	if cells.Degenerate != bins.Degenerate || cells.Degenerate != answers.Degenerate {
		errs = append(errs, fmt.Errorf("calibration: degenerate groups %d in cells, %d in bins, %d in answers",
			cells.Degenerate, bins.Degenerate, answers.Degenerate))
	}
	return append(errs, checkPending(r, cal.Totals)...)
}

func checkPending(r *Reader, t ledger.Totals) []error {
	bk := r.tx.Bucket(bucketCalib)
	if bk == nil {
		return nil
	}
	var errs []error
	var open int64
	err := bk.Bucket(calibPending).ForEach(func(k, v []byte) error {
		p, err := decodePending(k, v)
		if err != nil {
			return err
		}
		open++
		if p.N >= int64(p.GroupSize) {
			errs = append(errs, fmt.Errorf("calibration: prediction %x is open with a complete group (%d of %d)", k, p.N, p.GroupSize))
		}
		return nil
	})
	if err != nil {
		return append(errs, err)
	}
	journaled, jerrs := checkJournal(r)
	errs = append(errs, jerrs...)
	if open += journaled; open != t.Open() {
		errs = append(errs, fmt.Errorf("calibration: %d predictions stored open, totals say %d", open, t.Open()))
	}
	return errs
}
