package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/stats"
)

// MaxNameLen is the longest env or task name storage accepts (bbolt keys are bounded). Ingest
// quarantines longer names.
const MaxNameLen = 4096

// Commit applies b in one fsync'd transaction: file states, catalogue tasks, rollouts,
// quarantine entries, counters and adjacency lists change together or not at all. That is
// envsched's whole exactly-once guarantee: a file's offset is durable exactly when the records
// read up to it, and the statistics they change, are.
//
// Rollouts are deduplicated by RolloutID (against the database and earlier rollouts of the same
// batch), clipped into the configured reward range (counted), normalised into [0, 1] and folded
// into their task's statistics (stats.Task.Add at the rollout's step, or at the current round
// when it has none), their group's state (see GroupKey) and their environment's statistics.
// A task first seen in a rollout is added without metadata. A rollout with a non-finite reward,
// or an env or task name that is empty or longer than MaxNameLen, is an error: the caller
// quarantines such lines.
func (db *DB) Commit(b *Batch) (Result, error) {
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	var res Result
	var c *committer
	err := db.update(func(tx *bolt.Tx) error {
		if _, err := db.ids.prepare(tx, b.Rollouts); err != nil {
			return err
		}
		if err := db.tasks.load(tx, &db.logCache); err != nil {
			return err
		}
		res = Result{}
		c = newCommitter(tx, db.cfg, &db.ids, &db.tasks)
		return c.apply(b, &res)
	})
	if err != nil {
		db.ids.drop() // it holds ids of this failed commit: load it again from what is committed
		return Result{}, fmt.Errorf("commit to %s: %w", db.path, err)
	}
	db.tasks.apply(c.logged) // only now: a failed commit must leave the overlay as it was
	if c.filed {
		db.opens.commit(&countsTx{filed: true})
	}
	db.publish(c.logged)
	db.ids.committed(db, c.newIDs)
	return res, nil
}

// committer holds the state of one Commit: statistics are loaded once per task, group and
// environment, changed in memory, and written once at the end.
type committer struct {
	tx       *bolt.Tx
	filed    bool // the calibration journal was filed into pending
	cfg      Config
	counters Counters
	tasks    map[TaskKey]*taskState
	order    []*taskState
	envs     map[string]*stats.Env
	added    []record.Task // tasks this commit adds, with their description (see taskState.desc)
	changed  []record.Task // catalogue rows of known tasks whose description this commit changes
	ids      *idIndex
	newIDs   []idSlot // rollout ids added by this commit, for id_hashes
	hashes   []uint64 // hashID of each rollout's id (0 for none), in batch order
	rollouts *bolt.Bucket
	seq      uint64 // the last rollout seq used
	chunk    []byte // rollouts not yet put: uvarint length + record, each
	first    uint64 // seq of the first rollout in chunk
	inChunk  int
	lastTask *taskState
	dupTask  uint64 // the task seq of the rollout sameID found last (see noteReused)
	lastGKey []byte
	lastG    *stats.Group
	groups   *bolt.Bucket
	gstate   map[string]*stats.Group // by groups-bucket key
	gorder   []string
	ov       *taskOverlay
	logged   logWrite
	buf      []byte // scratch for encoding; copied by keep before bbolt sees it
	arena    []byte
	cal      *calibTx     // the calibration ledger; cal.bk nil when the database has none
	calTasks []*taskState // tasks whose open predictions this commit loaded
}

// keep copies b into the committer's arena. bbolt keeps references to the keys and values
// given to Put until the transaction ends, so scratch buffers must never be handed to it; the
// arena makes those copies cheap (one allocation per 64 KiB).
func (c *committer) keep(b []byte) []byte {
	if len(b) > arenaChunk/4 {
		return bytes.Clone(b)
	}
	if cap(c.arena)-len(c.arena) < len(b) {
		c.arena = make([]byte, 0, arenaChunk)
	}
	start := len(c.arena)
	c.arena = append(c.arena, b...)
	return c.arena[start:len(c.arena):len(c.arena)]
}

const arenaChunk = 64 << 10

// taskState is one task as changed by the transaction.
type taskState struct {
	key    TaskKey
	rec    taskRecord
	before stats.Task
	isNew  bool
	desc   int // index of its entry in added (isNew) or changed; -1 for a known task not in changed
	// open are the task's pending predictions (calibration ledger), loaded at its first
	// rollout of the commit when loaded is set
	open       []openPrediction
	openLoaded bool
}

func newCommitter(tx *bolt.Tx, cfg Config, ids *idIndex, ov *taskOverlay) *committer {
	rb := tx.Bucket(bucketRollouts)
	rb.FillPercent = 1 // keys only ever grow: pack pages full
	gb := tx.Bucket(bucketGroups)
	gb.FillPercent = 0.9 // mostly appended; late rollouts of old groups are rare
	return &committer{tx: tx, cfg: cfg, tasks: map[TaskKey]*taskState{}, envs: map[string]*stats.Env{},
		ids: ids, rollouts: rb, seq: rb.Sequence(), groups: gb, gstate: map[string]*stats.Group{}, ov: ov}
}

func (c *committer) apply(b *Batch, res *Result) error {
	var err error
	if c.counters, err = readCounters(c.tx); err != nil {
		return err
	}
	if c.cal, err = openCalib(c.tx, false); err != nil {
		return err
	}
	if len(b.Rollouts) > 0 { // they are offered to the open predictions: all in pending
		if c.filed, err = c.cal.file(); err != nil {
			return err
		}
	}
	steps := []func() error{
		func() error { return c.putFiles(b.Files) },
		func() error { return c.upsertTasks(b.Tasks, res) },
		func() error { return c.unretire(rowKeys(b.Tasks)) },
		func() error {
			n, err := c.retire(b.Listed, b.Lists, b.Held)
			res.Retired = n
			return err
		},
		func() error { return c.addRollouts(b.Rollouts, res) },
		func() error { res.Quarantined += b.Unstored; return c.putQuarantine(b.Quarantine, res) },
		func() error { return c.flushTasks() },
		func() error { return c.flushCalib() },
		func() error { return c.putIDHashes() },
		func() error { return c.putEdges(b.Edges) },
		func() error { return c.adjacency(b.Adjacency) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	for _, t := range c.added {
		res.Added = append(res.Added, TaskKey{t.Env, t.Task})
	}
	res.NewTasks = len(c.added)
	res.Uncatalogued = c.uncatalogued()
	if b.DeferEdges && (slices.ContainsFunc(c.added, described) || slices.ContainsFunc(c.changed, described)) {
		c.counters.EdgesPending = true
	}
	if b.EdgesDone {
		c.counters.EdgesPending = false
	}
	if b.ListsPending {
		c.counters.ListsPending = true
	}
	if b.ListsDone {
		c.counters.ListsPending = false
	}
	c.counters.CatalogWrites += int64(len(c.changed))
	c.counters.Rollouts += int64(res.Rollouts)
	c.counters.Duplicates += int64(res.Duplicates)
	c.counters.Clipped += int64(res.Clipped)
	c.counters.Quarantined += int64(res.Quarantined)
	c.counters.Unstored += int64(b.Unstored)
	return writeCounters(c.tx, c.counters)
}

func (c *committer) putFiles(files []FileState) error {
	bk := c.tx.Bucket(bucketFiles)
	for _, f := range files {
		if f.ID == 0 {
			return fmt.Errorf("file state %q without ID", f.Path)
		}
		if err := bk.Put(u64key(f.ID), encodeFile(f)); err != nil {
			return fmt.Errorf("put file %q: %w", f.Path, err)
		}
	}
	return nil
}

func rowKeys(rows []record.Task) []TaskKey {
	keys := make([]TaskKey, len(rows))
	for i, t := range rows {
		keys[i] = TaskKey{t.Env, t.Task}
	}
	return keys
}

func (c *committer) upsertTasks(rows []record.Task, res *Result) error {
	for i := range rows {
		t := &rows[i]
		ts, err := c.task(t.Env, t.Task, t)
		if err != nil {
			return err
		}
		if !ts.isNew {
			res.TasksUpdated++
		}
		meta := encodeMeta(*t)
		c.describe(ts, *t, meta)
		ts.rec.InCatalog = true
		cb, err := bucketIn(c.tx.Bucket(bucketCatalog), t.Env)
		if err != nil {
			return err
		}
		cb.FillPercent = pagesOfLists
		if err := cb.Put([]byte(t.Task), meta); err != nil {
			return fmt.Errorf("put %s/%s/%s: %w", bucketCatalog, t.Env, t.Task, err)
		}
	}
	return nil
}

// describe notes row, whose encoding is meta, as the description of ts that the Adjacency hook
// gets: it replaces the entry in added of a task this commit adds, or in changed of a known
// task already there (the later row of a batch wins), and adds a known task to changed when
// meta differs from its stored description (none, for a task first seen in rollouts). Call it
// before meta is stored.
func (c *committer) describe(ts *taskState, row record.Task, meta []byte) {
	switch {
	case ts.isNew:
		c.added[ts.desc] = row
	case ts.desc >= 0:
		c.changed[ts.desc] = row
	case !bytes.Equal(c.storedMeta(ts.key), meta):
		ts.desc = len(c.changed)
		c.changed = append(c.changed, row)
	}
}

// storedMeta returns the stored catalogue metadata of key, or that of an empty description
// when it has none.
func (c *committer) storedMeta(key TaskKey) []byte {
	if eb := c.tx.Bucket(bucketCatalog).Bucket([]byte(key.Env)); eb != nil {
		if v := eb.Get([]byte(key.Task)); v != nil {
			return v
		}
	}
	return encodeMeta(record.Task{})
}

// task returns the state of (env, task), loading it, or adding it when it is not stored; row is
// the catalogue row that adds it (nil for a task first seen in a rollout).
func (c *committer) task(env, task string, row *record.Task) (*taskState, error) {
	if lt := c.lastTask; lt != nil && lt.key.Env == env && lt.key.Task == task {
		return lt, nil // rollouts of one group come together
	}
	key := TaskKey{env, task}
	if ts := c.tasks[key]; ts != nil {
		c.lastTask = ts
		return ts, nil
	}
	if err := checkName(env, task); err != nil {
		return nil, err
	}
	ts := &taskState{key: key}
	rec, found, err := loadTaskRecord(c.tx, c.ov, key)
	if err != nil {
		return nil, err
	}
	if found {
		ts.rec, ts.before = rec, rec.Stats
	} else {
		if ts.rec.Seq, err = c.tx.Bucket(bucketTasks).NextSequence(); err != nil {
			return nil, err
		}
		sb := c.tx.Bucket(bucketTaskSeqs)
		sb.FillPercent = 1 // keys only ever grow: pack pages full
		if err := sb.Put(u64key(ts.rec.Seq), nodeKey(env, task)); err != nil {
			return nil, fmt.Errorf("put task seq of %s/%s: %w", env, task, err)
		}
		ts.isNew, ts.desc = true, len(c.added)
		added := record.Task{Env: env, Task: task}
		if row != nil {
			added = *row
		}
		c.added = append(c.added, added)
	}
	if !ts.isNew {
		ts.desc = -1
	}
	c.tasks[key] = ts
	c.order = append(c.order, ts)
	c.lastTask = ts
	return ts, nil
}

// uncatalogued lists the tasks of c.added that have no catalogue row when the commit ends while
// the catalogue describes other tasks, with the catalogued task each reads as, if any. A task
// whose rollouts come before its catalogue row is listed too: no row had been read for it yet.
func (c *committer) uncatalogued() []Uncatalogued {
	cb := c.tx.Bucket(bucketCatalog)
	if len(c.added) == 0 {
		return nil
	}
	if k, _ := cb.Cursor().First(); k == nil {
		return nil // no catalogue: rollouts alone describe this database's tasks
	}
	var out []Uncatalogued
	for _, t := range c.added {
		eb := cb.Bucket([]byte(t.Env))
		if eb != nil && eb.Get([]byte(t.Task)) != nil {
			continue
		}
		u := Uncatalogued{Task: TaskKey{t.Env, t.Task}}
		if len(out) < MaxLikeSearches {
			u.Like = likeInCatalogue(cb, eb, u.Task)
		}
		out = append(out, u)
	}
	return out
}

// likeInCatalogue finds the catalogued task key reads as: a task of its environment (eb, nil when
// the catalogue has none of it) whose id reads as key's, else a task of the environment whose name
// reads as key's whose id is key's or reads as it. Zero when none, or more than one, is found.
func likeInCatalogue(cb, eb *bolt.Bucket, key TaskKey) TaskKey {
	if eb != nil {
		if like := record.LookAlike(key.Task, bucketKeys(eb)); like != "" {
			return TaskKey{key.Env, like}
		}
	}
	env := record.LookAlike(key.Env, func(yield func(string) bool) {
		_ = cb.ForEachBucket(func(k []byte) error {
			if !yield(string(k)) {
				return errStop
			}
			return nil
		})
	})
	if env == "" {
		return TaskKey{}
	}
	other := cb.Bucket([]byte(env))
	if other.Get([]byte(key.Task)) != nil {
		return TaskKey{env, key.Task}
	}
	if like := record.LookAlike(key.Task, bucketKeys(other)); like != "" {
		return TaskKey{env, like}
	}
	return TaskKey{}
}

// errStop ends a bbolt iteration early; it is never returned.
var errStop = errors.New("stop")

// bucketKeys yields the keys of b's pairs (its nested buckets' names are not among them).
func bucketKeys(b *bolt.Bucket) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if v != nil && !yield(string(k)) {
				return
			}
		}
	}
}

func checkName(env, task string) error {
	if env == "" || task == "" || len(env) > MaxNameLen || len(task) > MaxNameLen {
		return fmt.Errorf("env %.40q task %.40q: names must be 1 to %d bytes", env, task, MaxNameLen)
	}
	return nil
}

func (c *committer) addRollouts(rs []Rollout, res *Result) error {
	c.hashes = c.ids.warm(rs, make([]uint64, 0, len(rs)))
	c.newIDs = make([]idSlot, 0, len(rs))
	for i := range rs {
		if err := c.addRollout(&rs[i], c.hashes[i], res); err != nil {
			return err
		}
	}
	if err := c.putChunk(); err != nil {
		return err
	}
	return c.rollouts.SetSequence(c.seq)
}

// Rollouts are stored in chunks: one key (the seq of its first rollout) per up to chunkMax
// rollouts of one commit, which saves a B+tree insert and a leaf element per rollout.
const (
	chunkMax   = 64
	chunkBytes = 900 // under a quarter page: see taskLogPart
	idHashPart = 60  // pairs per value of id_hashes
)

func (c *committer) putChunk() error {
	if c.inChunk == 0 {
		return nil
	}
	if err := c.rollouts.Put(c.keep(u64key(c.first)), c.keep(c.chunk)); err != nil {
		return fmt.Errorf("put rollouts %d..: %w", c.first, err)
	}
	c.chunk, c.inChunk = c.chunk[:0], 0
	return nil
}

func (c *committer) appendRollout(seq uint64, rec []byte) error {
	if c.inChunk == 0 {
		c.first = seq
	}
	c.chunk = append(binary.AppendUvarint(c.chunk, uint64(len(rec))), rec...)
	c.inChunk++
	if c.inChunk >= chunkMax || len(c.chunk) >= chunkBytes {
		return c.putChunk()
	}
	return nil
}

func (c *committer) addRollout(r *Rollout, h uint64, res *Result) error {
	if math.IsNaN(r.Reward) || math.IsInf(r.Reward, 0) {
		return fmt.Errorf("rollout of %s/%s: reward %v is not finite", r.Env, r.Task, r.Reward)
	}
	seq := c.seq + 1
	if dup, err := c.seen(r.RolloutID, h, seq); dup || err != nil {
		if dup {
			res.Duplicates++
			c.noteReused(r, res)
		}
		return err
	}
	ts, err := c.task(r.Env, r.Task, nil)
	if err != nil {
		return err
	}
	c.seq = seq
	sr := c.stored(r)
	if sr.Clipped {
		res.Clipped++
	}
	c.buf = encodeRollout(c.buf, ts.rec.Seq, &sr)
	if err := c.appendRollout(seq, c.buf); err != nil {
		return err
	}
	g, err := c.group(groupKey(sr.Round, ts.rec.Seq, sr.Group))
	if err != nil {
		return err
	}
	norm := c.cfg.Reward.Normalise(sr.Reward)
	ts.rec.Stats.Add(norm, sr.Round, sr.Step, sr.HasStep, g, c.cfg.Decay)
	res.Rollouts++
	return c.measure(ts, &sr, norm)
}

// measure offers a stored rollout (normalised reward r) to the open predictions of its task
// (see calibTx.offer).
func (c *committer) measure(ts *taskState, sr *StoredRollout, r float64) error {
	if c.cal.bk == nil {
		return nil
	}
	if !ts.openLoaded {
		var err error
		if ts.open, err = c.cal.pendingOf(ts.rec.Seq); err != nil {
			return err
		}
		ts.openLoaded = true
		c.calTasks = append(c.calTasks, ts)
	}
	if len(ts.open) == 0 {
		return nil
	}
	c.cal.dirty = true
	return c.cal.offer(ts.key.Env, ts.open, r, sr)
}

// flushCalib writes the open predictions this commit changed and the ledger's sums.
func (c *committer) flushCalib() error {
	if c.cal.bk == nil || !c.cal.dirty {
		return nil
	}
	for _, ts := range c.calTasks {
		if err := c.cal.putOpen(ts.open); err != nil {
			return err
		}
	}
	return c.cal.flush()
}

// seen reports whether the rollout id was stored before (by this commit or an earlier one), and
// notes it as rollout seq when not.
func (c *committer) seen(id string, h, seq uint64) (bool, error) {
	if id == "" {
		return false, nil
	}
	found, err := c.ids.findOrInsert(h, seq, func(prev uint64) (bool, error) { return c.sameID(prev, id) })
	if found || err != nil {
		return found, err
	}
	c.newIDs = append(c.newIDs, idSlot{h, seq}) // a colliding id too: it has an entry of its own
	return false, nil
}

// noteReused counts r in res.Reused when the rollout stored under its id (c.dupTask, noted by
// sameID) is of another task.
func (c *committer) noteReused(r *Rollout, res *Result) {
	stored := c.tx.Bucket(bucketTaskSeqs).Get(u64key(c.dupTask))
	if stored == nil || bytes.Equal(stored, nodeKey(r.Env, r.Task)) {
		return
	}
	res.Reused++
	if res.Reused == 1 {
		env, task, _ := splitNodeKey(stored)
		res.FirstReused = ReusedID{RolloutID: r.RolloutID, Task: TaskKey{r.Env, r.Task}, Stored: TaskKey{env, task}}
	}
}

// sameID reports whether the rollout stored as seq has rollout id id.
func (c *committer) sameID(seq uint64, id string) (bool, error) {
	var rec []byte
	if c.inChunk > 0 && seq >= c.first {
		rec = chunkRecord(c.chunk, seq-c.first)
	} else {
		cur := c.rollouts.Cursor()
		k, v := cur.Seek(u64key(seq))
		switch {
		case k == nil:
			k, v = cur.Last()
		case binary.BigEndian.Uint64(k) > seq:
			k, v = cur.Prev()
		}
		if k != nil {
			rec = chunkRecord(v, seq-binary.BigEndian.Uint64(k))
		}
	}
	if rec == nil {
		return false, fmt.Errorf("dedupe index names rollout %d, which is not stored: %w", seq, ErrCorrupt)
	}
	var sr StoredRollout
	taskSeq, err := decodeRollout(rec, &sr)
	if err != nil {
		return false, err
	}
	c.dupTask = taskSeq
	return sr.RolloutID == id, nil
}

// chunkRecord returns the i-th record of a chunk, or nil.
func chunkRecord(chunk []byte, i uint64) []byte {
	for d := chunk; len(d) > 0; i-- {
		n, w := binary.Uvarint(d)
		if w <= 0 || uint64(len(d)-w) < n {
			return nil
		}
		if i == 0 {
			return d[w : w+int(n)]
		}
		d = d[w+int(n):]
	}
	return nil
}

// putIDHashes appends this commit's new rollout ids to the persisted dedupe index.
func (c *committer) putIDHashes() error {
	if len(c.newIDs) == 0 {
		return nil
	}
	bk := c.tx.Bucket(bucketIDHashes)
	for i := 0; i < len(c.newIDs); i += idHashPart {
		part := c.newIDs[i:min(i+idHashPart, len(c.newIDs))]
		v := make([]byte, 0, 16*len(part))
		for _, s := range part {
			v = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(v, s.h), s.seq)
		}
		if err := appendValue(bk, v); err != nil {
			return fmt.Errorf("put id hashes: %w", err)
		}
	}
	return nil
}

// stored is the rollout as it will be stored: clipped, with its round.
func (c *committer) stored(r *Rollout) StoredRollout {
	sr := StoredRollout{Env: r.Env, Task: r.Task, Reward: r.Reward, Round: c.counters.Round,
		HasStep: r.HasStep, Group: r.Group, RequestID: r.RequestID, RolloutID: r.RolloutID, File: r.File}
	if r.HasStep {
		sr.Round, sr.Step = r.Step, r.Step
	}
	if sr.Reward < c.cfg.Reward.Min {
		sr.Reward, sr.Clipped = c.cfg.Reward.Min, true
	} else if sr.Reward > c.cfg.Reward.Max {
		sr.Reward, sr.Clipped = c.cfg.Reward.Max, true
	}
	return sr
}

// group returns the in-transaction state of one group.
func (c *committer) group(key []byte) (*stats.Group, error) {
	if c.lastG != nil && bytes.Equal(key, c.lastGKey) {
		return c.lastG, nil
	}
	if g := c.gstate[string(key)]; g != nil {
		c.lastG, c.lastGKey = g, key
		return g, nil
	}
	g := new(stats.Group)
	if v := c.groups.Get(key); v != nil {
		var err error
		if *g, err = decodeGroup(v); err != nil {
			return nil, fmt.Errorf("group %x: %w", key, err)
		}
	}
	c.gstate[string(key)] = g
	c.gorder = append(c.gorder, string(key))
	c.lastG, c.lastGKey = g, key
	return g, nil
}

func (c *committer) putQuarantine(qs []QuarantineEntry, res *Result) error {
	bk := c.tx.Bucket(bucketQuarantine)
	for _, q := range qs {
		seq, err := bk.NextSequence()
		if err != nil {
			return err
		}
		q.Seq = seq
		if len(q.Head) > MaxHead {
			q.Head = q.Head[:MaxHead]
		}
		q.Reason = ClipReason(q.Reason)
		if err := bk.Put(u64key(seq), encodeQuarantine(q)); err != nil {
			return fmt.Errorf("put quarantine entry: %w", err)
		}
		res.Quarantined++
	}
	return nil
}

// MaxHead is how many first bytes of a quarantined line are kept.
const MaxHead = 256

// MaxReason is how many bytes of a quarantine reason are kept. A reason may quote what a file
// holds (a parquet catalogue row's env and task names, a column's path in its schema): six rows
// whose env names were 1 MiB each stored 6 MiB of reasons and wrote 15 MB of log.
const MaxReason = 1024

// ClipReason makes reason valid UTF-8 and cuts it to at most MaxReason bytes on a character
// boundary, saying how long it was.
func ClipReason(reason string) string {
	if len(reason) <= MaxReason && utf8.ValidString(reason) {
		return reason
	}
	n := len(reason)
	head := strings.ToValidUTF8(reason[:min(n, 4*MaxReason)], "\uFFFD") // a run of bad bytes is one U+FFFD
	if n <= 4*MaxReason && len(head) <= MaxReason {
		return head
	}
	cut := min(len(head), MaxReason-32)
	for cut > 0 && cut < len(head) && !utf8.RuneStart(head[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes in all)", head[:cut], n)
}

// flushTasks writes every changed task, group and environment once.
func (c *committer) flushTasks() error {
	recs := make([]keyedRecord, 0, len(c.order))
	for _, ts := range c.order {
		if err := c.applyEnv(ts); err != nil {
			return err
		}
		recs = append(recs, keyedRecord{ts.key, ts.rec})
	}
	var err error
	if c.logged, err = writeTaskRecords(c.tx, c.ov, recs); err != nil {
		return err
	}
	for _, key := range c.gorder {
		c.buf = encodeGroup(c.buf, *c.gstate[key])
		if err := c.groups.Put(c.keep([]byte(key)), c.keep(c.buf)); err != nil {
			return fmt.Errorf("put group %x: %w", key, err)
		}
	}
	eb := c.tx.Bucket(bucketEnvs)
	for name, e := range c.envs {
		if err := eb.Put([]byte(name), encodeEnv(*e)); err != nil {
			return fmt.Errorf("put env %s: %w", name, err)
		}
	}
	return nil
}

func (c *committer) applyEnv(ts *taskState) error {
	e, err := c.env(ts.key.Env)
	if err != nil {
		return err
	}
	e.Apply(ts.before, ts.rec.Stats, ts.isNew)
	return nil
}

func (c *committer) env(name string) (*stats.Env, error) {
	if e := c.envs[name]; e != nil {
		return e, nil
	}
	e := new(stats.Env)
	if v := c.tx.Bucket(bucketEnvs).Get([]byte(name)); v != nil {
		var err error
		if *e, err = decodeEnv(v); err != nil {
			return nil, fmt.Errorf("env %s: %w", name, err)
		}
	}
	c.envs[name] = e
	return e, nil
}

// pagesOfLists is the FillPercent of the buckets of values that a later commit may rewrite
// longer (adjacency lists, catalogue rows): at bbolt's default of one half, the lists of a
// catalogue ingested at once took twice the pages they fill, which every start reads; a tenth
// of a page is left for the values to grow in before a page splits.
const pagesOfLists = 0.9

func (c *committer) putEdges(lists []NodeEdges) error {
	bk := c.tx.Bucket(bucketEdges)
	bk.FillPercent = pagesOfLists
	for _, l := range lists {
		key := nodeKey(l.Node.Env, l.Node.Task)
		var err error
		switch {
		case len(l.Edges) > 0:
			c.counters.EdgeWrites++
			err = bk.Put(key, encodeEdges(l.Edges))
		case bk.Get(key) != nil: // removing a list that was there; an isolated task's changes nothing
			c.counters.EdgeWrites++
			err = bk.Delete(key)
		}
		if err != nil {
			return fmt.Errorf("put edges of %s/%s: %w", l.Node.Env, l.Node.Task, err)
		}
	}
	return nil
}

// adjacency calls fn, when the commit adds tasks or changes descriptions, with a Reader over
// the write transaction. The Reader has no log cache: the cache is keyed by transaction ID,
// and this transaction's ID is reused if it aborts.
func (c *committer) adjacency(fn func(r *Reader, added, changed []record.Task) ([]NodeEdges, error)) error {
	if fn == nil || len(c.added)+len(c.changed) == 0 {
		return nil
	}
	lists, err := fn(&Reader{tx: c.tx, cfg: c.cfg}, c.added, c.changed)
	if err != nil {
		return fmt.Errorf("adjacency of added and changed tasks: %w", err)
	}
	return c.putEdges(lists)
}

// bucketIn returns the sub-bucket name of parent, creating it when missing.
func bucketIn(parent *bolt.Bucket, name string) (*bolt.Bucket, error) {
	if b := parent.Bucket([]byte(name)); b != nil {
		return b, nil
	}
	b, err := parent.CreateBucket([]byte(name))
	if err != nil {
		return nil, fmt.Errorf("create bucket %q: %w", name, err)
	}
	return b, nil
}

// putNested puts key=value into top/env.
func putNested(tx *bolt.Tx, top []byte, env string, key, value []byte) error {
	eb, err := bucketIn(tx.Bucket(top), env)
	if err != nil {
		return err
	}
	if err := eb.Put(key, value); err != nil {
		return fmt.Errorf("put %s/%s/%s: %w", top, env, key, err)
	}
	return nil
}

// described reports whether t says anything the graph's similarity reads.
func described(t record.Task) bool {
	return t.Text != "" || len(t.Tools) > 0 || len(t.Tags) > 0 || len(t.Embedding) > 0
}
