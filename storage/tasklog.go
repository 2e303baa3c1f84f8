package storage

import (
	"fmt"
	"maps"
	"sort"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// Task records are written in two places. A commit appends the records of the tasks it changed
// to task_log as one value; every checkpointBytes of log, the newest records are written into
// tasks (env -> task -> record) and the log is emptied, in the same transaction. A commit touching
// a thousand tasks spread over the whole tasks bucket would otherwise rewrite nearly every page of
// it. Readers see tasks overlaid with the log; the writer keeps the log's newest records in memory.

// checkpointBytes is the size of task_log at which a commit folds it into tasks.
const checkpointBytes = 8 << 20

// taskLogPart is how many task records one value of task_log holds: values stay under a
// quarter page, so that appending one never rewrites the values before it (bbolt does not split
// a leaf of four or fewer elements, however large).
const taskLogPart = 6

// appendValue puts v under the bucket's next sequence number.
func appendValue(bk *bolt.Bucket, v []byte) error {
	bk.FillPercent = 1
	n, err := bk.NextSequence()
	if err != nil {
		return err
	}
	return bk.Put(u64key(n), v)
}

// keyedRecord is one task record of the log.
type keyedRecord struct {
	key TaskKey
	rec taskRecord
}

func encodeTaskLog(recs []keyedRecord) []byte {
	e := enc(make([]byte, 0, len(recs)*(taskRecordLen+32)))
	var scratch []byte
	for _, kr := range recs {
		scratch = kr.rec.encode(scratch)
		e = append(e.str(kr.key.Env).str(kr.key.Task), scratch...)
	}
	return e
}

func decodeTaskLog(v []byte, fn func(TaskKey, taskRecord)) error {
	d := dec{b: v}
	for len(d.b) > 0 && !d.bad {
		key := TaskKey{Env: d.str(), Task: d.str()}
		raw := d.take(taskRecordLen)
		if d.bad {
			break
		}
		rec, err := decodeTaskRecord(raw)
		if err != nil {
			return err
		}
		fn(key, rec)
	}
	return d.err("task log")
}

// readTaskLog returns the newest record of every task in the log, and the log's size.
func readTaskLog(tx *bolt.Tx) (map[TaskKey]taskRecord, int, error) {
	out := map[TaskKey]taskRecord{}
	size := 0
	err := tx.Bucket(bucketTaskLog).ForEach(func(k, v []byte) error {
		size += len(v)
		return decodeTaskLog(v, func(key TaskKey, rec taskRecord) { out[key] = rec })
	})
	return out, size, err
}

// taskOverlay is the writer's copy of the log: the newest record of every task changed since
// the last checkpoint.
type taskOverlay struct {
	limit  int // checkpointBytes, except in tests
	mu     sync.Mutex
	loaded bool
	m      map[TaskKey]taskRecord
	size   int
}

// load reads the log into the overlay once, at the first write transaction tx: from c, a
// copy, when c holds the log as of the state tx starts from (a write transaction's ID is the
// last commit's + 1), as the reader of a starting daemon's first answer leaves it there; the
// copy costs a tenth of decoding the log again (up to checkpointBytes, 60,000 records).
func (o *taskOverlay) load(tx *bolt.Tx, c *logCache) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.loaded {
		return nil
	}
	if m, size, ok := c.get(tx.ID() - 1); ok && tx.Writable() {
		o.m, o.size, o.loaded = maps.Clone(m), size, true
		return nil
	}
	m, size, err := readTaskLog(tx)
	if err != nil {
		return err
	}
	o.m, o.size, o.loaded = m, size, true
	return nil
}

func (o *taskOverlay) get(k TaskKey) (taskRecord, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	rec, ok := o.m[k]
	return rec, ok
}

// logWrite is what one transaction wrote to the log, applied to the overlay once it commits:
// recs are the records it wrote, whether to the log or, at a checkpoint, into tasks.
type logWrite struct {
	recs       []keyedRecord
	size       int
	checkpoint bool
}

func (o *taskOverlay) apply(w logWrite) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if w.checkpoint {
		o.m, o.size = map[TaskKey]taskRecord{}, 0
		return
	}
	for _, kr := range w.recs {
		o.m[kr.key] = kr.rec
	}
	o.size += w.size
}

// loadTaskRecord returns the current record of a task: the log's newest, or the one in tasks.
func loadTaskRecord(tx *bolt.Tx, o *taskOverlay, key TaskKey) (taskRecord, bool, error) {
	if rec, ok := o.get(key); ok {
		return rec, true, nil
	}
	eb := tx.Bucket(bucketTasks).Bucket([]byte(key.Env))
	if eb == nil {
		return taskRecord{}, false, nil
	}
	v := eb.Get([]byte(key.Task))
	if v == nil {
		return taskRecord{}, false, nil
	}
	rec, err := decodeTaskRecord(v)
	if err != nil {
		return rec, false, fmt.Errorf("task %s/%s: %w", key.Env, key.Task, err)
	}
	return rec, true, nil
}

// writeTaskRecords appends recs to the log, or, when the log has grown past checkpointBytes,
// writes the overlay and recs into tasks and empties the log.
func writeTaskRecords(tx *bolt.Tx, o *taskOverlay, recs []keyedRecord) (logWrite, error) {
	if len(recs) == 0 {
		return logWrite{}, nil
	}
	v := encodeTaskLog(recs)
	o.mu.Lock()
	size, limit := o.size, o.limit
	o.mu.Unlock()
	if limit <= 0 {
		limit = checkpointBytes
	}
	if size+len(v) > limit {
		return logWrite{recs: recs, checkpoint: true}, checkpoint(tx, o, recs)
	}
	for i := 0; i < len(recs); i += taskLogPart {
		if err := appendValue(tx.Bucket(bucketTaskLog), encodeTaskLog(recs[i:min(i+taskLogPart, len(recs))])); err != nil {
			return logWrite{}, fmt.Errorf("put task log: %w", err)
		}
	}
	return logWrite{recs: recs, size: len(v)}, nil
}

// checkpoint writes every record of the overlay, then recs, into tasks, and empties the log.
func checkpoint(tx *bolt.Tx, o *taskOverlay, recs []keyedRecord) error {
	o.mu.Lock()
	all := make(map[TaskKey]taskRecord, len(o.m)+len(recs))
	for k, rec := range o.m {
		all[k] = rec
	}
	o.mu.Unlock()
	for _, kr := range recs {
		all[kr.key] = kr.rec
	}
	keys := make([]TaskKey, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].Env < keys[j].Env || keys[i].Env == keys[j].Env && keys[i].Task < keys[j].Task
	})
	// Task records have one length, so a page of them never grows by a checkpoint; pages are
	// packed full (bbolt splits a node only past a page, at FillPercent of one): the records
	// of a catalogue first folded in, in key order, take half the pages they took at bbolt's
	// default of one half, and every later checkpoint, which rewrites nearly every page of
	// tasks, and every start, which reads them all, costs half as much.
	tb := tx.Bucket(bucketTasks)
	var eb *bolt.Bucket
	for i, k := range keys {
		if i == 0 || k.Env != keys[i-1].Env {
			var err error
			if eb, err = bucketIn(tb, k.Env); err != nil {
				return err
			}
			eb.FillPercent = 1
		}
		// a value of its own: bbolt keeps what Put is given until the commit
		if err := eb.Put([]byte(k.Task), all[k].encode(nil)); err != nil {
			return fmt.Errorf("put %s/%s/%s: %w", bucketTasks, k.Env, k.Task, err)
		}
	}
	if err := tx.DeleteBucket(bucketTaskLog); err != nil {
		return fmt.Errorf("empty task log: %w", err)
	}
	_, err := tx.CreateBucket(bucketTaskLog)
	return err
}

// overlayOf returns the reader's view of the log, read once per Reader, and once per database
// state for all readers of a DB (a read transaction's ID names the last committed write).
func (r *Reader) overlayOf() (map[TaskKey]taskRecord, error) {
	if r.ov != nil {
		return r.ov, nil
	}
	if m, _, ok := r.cache.get(r.tx.ID()); ok {
		r.ov = m
		return m, nil
	}
	m, size, err := readTaskLog(r.tx)
	if err != nil {
		return nil, err
	}
	r.ov = m
	r.cache.put(r.tx.ID(), m, size)
	return m, nil
}

// logCache is the task_log of one database state, decoded. Its map is never changed once put.
type logCache struct {
	mu   sync.Mutex
	txid int
	m    map[TaskKey]taskRecord
	size int // the log's bytes, as taskOverlay counts them
}

func (c *logCache) get(txid int) (map[TaskKey]taskRecord, int, bool) {
	if c == nil {
		return nil, 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m, c.size, c.m != nil && c.txid == txid
}

func (c *logCache) put(txid int, m map[TaskKey]taskRecord, size int) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if txid >= c.txid {
		c.txid, c.m, c.size = txid, m, size
	}
}
