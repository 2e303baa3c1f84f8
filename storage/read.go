package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	bolt "go.etcd.io/bbolt"

	"github.com/envsched/envsched/stats"
)

// Reader reads one consistent snapshot of the database. It is valid only inside the function
// given to View (or, over a commit's own transaction, during a call of Batch.Adjacency);
// everything it returns is a copy and stays valid after.
type Reader struct {
	tx  *bolt.Tx
	cfg Config
	ov  map[TaskKey]taskRecord // task_log, read at first need
	// cache shares the decoded task_log between readers of the same database state.
	cache *logCache
	db    *DB // the database read, for Beside; nil inside a commit and in Check
}

// View runs fn with a Reader over one read transaction. Keep fn short: a long read transaction
// keeps the file from reusing freed pages.
func (db *DB) View(fn func(r *Reader) error) error {
	return db.view(func(tx *bolt.Tx) error {
		return fn(&Reader{tx: tx, cfg: db.cfg, cache: &db.logCache, db: db})
	})
}

// Beside runs fn with a second Reader of r's snapshot on a goroutine of its own, so that two
// scans of one snapshot run at once, and returns the function that waits for fn and returns
// its error (call it before r's View returns; a damaged page is a *DamagedError, as in View).
// The second Reader is a read transaction of its own, used only when it sees exactly r's
// snapshot (its transaction ID, which names the last committed write, is r's) and shares r's
// decoded task log; when it cannot be had (r reads inside a commit, a commit came between, the
// file is shorter than r's snapshot), fn runs with r itself before Beside returns. Either way
// fn reads the same data.
func (r *Reader) Beside(fn func(*Reader) error) (wait func() error) {
	now := func(err error) func() error { return func() error { return err } }
	if r.db == nil || r.tx.Writable() {
		return now(fn(r))
	}
	if _, err := r.overlayOf(); err != nil {
		return now(err)
	}
	tx, err := r.db.beginBeside(r.tx)
	if err != nil {
		return now(err)
	}
	if tx == nil {
		return now(fn(r))
	}
	twin := &Reader{tx: tx, cfg: r.cfg, ov: r.ov, cache: r.cache, db: r.db}
	done := make(chan error, 1)
	go func() {
		defer r.db.rollback(tx)
		done <- r.db.guard(func() error { return fn(twin) })
	}()
	return func() error { return <-done }
}

// beginBeside begins a second read transaction of of's snapshot for Beside, or returns nil
// when there is none to be had; an error is damage its begin met (see DB.begin).
//
// A second read transaction must not begin while a commit waits to remap the file: that
// commit waits for of's transaction to end, and bbolt's remap lock would hold the new one
// back behind it (of's goroutine waiting for itself). Every commit after Open holds writeMu
// for its whole transaction, so none is under way while writeMu is held here.
//
// A file cut short under the running process would make the begin fault on its meta page
// with bbolt's meta lock held, and of's own rollback then waited for that lock for ever
// (review14). DB.begin looks at the length first and, in the window left after that look,
// DB.rollback abandons of instead; and a file shorter than of's snapshot is not begun on at
// all: fn runs with of's Reader and meets the damage there, with no lock of bbolt held.
func (db *DB) beginBeside(of *bolt.Tx) (*bolt.Tx, error) {
	if !db.writeMu.TryLock() {
		return nil, nil
	}
	defer db.writeMu.Unlock()
	if fi, err := db.openStat(); err != nil || fi.Size() < of.Size() {
		return nil, nil
	}
	tx, err := db.begin()
	if d := (*DamagedError)(nil); errors.As(err, &d) {
		return nil, err
	}
	if err != nil {
		return nil, nil
	}
	if tx.ID() != of.ID() {
		db.rollback(tx)
		return nil, nil
	}
	return tx, nil
}

// Counters returns the whole-database counters.
func (r *Reader) Counters() (Counters, error) { return readCounters(r.tx) }

// Envs returns the statistics of every environment.
func (r *Reader) Envs() (map[string]stats.Env, error) {
	out := map[string]stats.Env{}
	err := r.tx.Bucket(bucketEnvs).ForEach(func(k, v []byte) error {
		e, err := decodeEnv(v)
		if err != nil {
			return fmt.Errorf("env %s: %w", k, err)
		}
		out[string(k)] = e
		return nil
	})
	return out, err
}

// Env returns the statistics of one environment, or ErrNotFound.
func (r *Reader) Env(name string) (stats.Env, error) {
	v := r.tx.Bucket(bucketEnvs).Get([]byte(name))
	if v == nil {
		return stats.Env{}, fmt.Errorf("env %q: %w", name, ErrNotFound)
	}
	return decodeEnv(v)
}

// Tasks calls fn for every task, by environment then task name (byte order). With meta, the
// catalogue metadata (text, tools, tags, embedding) is filled in; without, only Env, Task,
// InCatalog, Stats and Seq (the fast path for loading statistics). An error from fn stops the
// iteration and is returned. It releases the pages it has read as it goes (ReleasePages).
func (r *Reader) Tasks(meta bool, fn func(TaskInfo) error) error {
	ov, err := r.overlayOf()
	if err != nil {
		return err
	}
	byEnv := map[string][]string{}
	for k := range ov {
		byEnv[k.Env] = append(byEnv[k.Env], k.Task)
	}
	tb, cb := r.tx.Bucket(bucketTasks), r.tx.Bucket(bucketCatalog)
	_ = tb.ForEachBucket(func(env []byte) error {
		if _, ok := byEnv[string(env)]; !ok {
			byEnv[string(env)] = nil
		}
		return nil
	})
	envs := make([]string, 0, len(byEnv))
	for env, tasks := range byEnv {
		envs = append(envs, env)
		sort.Strings(tasks)
	}
	sort.Strings(envs)
	rl := &releaser{tx: r.tx}
	for _, env := range envs {
		var cat *bolt.Bucket
		if meta {
			cat = cb.Bucket([]byte(env))
		}
		if err := r.envTasks(env, tb.Bucket([]byte(env)), byEnv[env], cat, rl, fn); err != nil {
			return err
		}
	}
	return nil
}

// envTasks merges the tasks of one environment in tasks (base) with those in the log.
func (r *Reader) envTasks(env string, base *bolt.Bucket, logged []string, cat *bolt.Bucket, rl *releaser, fn func(TaskInfo) error) error {
	var c *bolt.Cursor
	var k, v []byte
	if base != nil {
		c = base.Cursor()
		k, v = c.First()
	}
	meta := newMetaCursor(cat)
	for i := 0; k != nil || i < len(logged); {
		rl.tick()
		var name string
		var rec taskRecord
		if k != nil && (i == len(logged) || string(k) < logged[i]) {
			var err error
			if rec, err = decodeTaskRecord(v); err != nil {
				return fmt.Errorf("task %s/%s: %w", env, k, err)
			}
			name = string(k)
			k, v = c.Next()
		} else {
			name, rec = logged[i], r.ov[TaskKey{env, logged[i]}]
			i++
			if k != nil && string(k) == name {
				k, v = c.Next()
			}
		}
		ti, err := taskInfo(env, name, rec, meta)
		if err != nil {
			return err
		}
		if err := fn(ti); err != nil {
			return err
		}
	}
	return nil
}

// taskInfo builds one task, with its metadata when meta is not nil.
func taskInfo(env, name string, rec taskRecord, meta *metaCursor) (TaskInfo, error) {
	ti := TaskInfo{InCatalog: rec.InCatalog, Stats: rec.Stats, Seq: rec.Seq}
	ti.Env, ti.Task.Task = env, name
	if meta == nil {
		return ti, nil
	}
	if mv := meta.find(name); mv != nil {
		if err := decodeMeta(mv, &ti.Task); err != nil {
			return TaskInfo{}, fmt.Errorf("task %s/%s: %w", env, name, err)
		}
	}
	return ti, nil
}

// metaCursor walks an environment's catalogue bucket beside its tasks, which come in the same
// (byte) order: one step a task, where a lookup would search the tree from its root.
type metaCursor struct {
	c       *bolt.Cursor
	k, v    []byte
	started bool
}

// newMetaCursor returns a cursor over cat, or nil when cat is nil.
func newMetaCursor(cat *bolt.Bucket) *metaCursor {
	if cat == nil {
		return nil
	}
	return &metaCursor{c: cat.Cursor()}
}

// find returns the stored metadata of name (nil when none); names must be asked in increasing
// order. The first is sought; each later one is reached by stepping.
func (m *metaCursor) find(name string) []byte {
	if !m.started {
		m.k, m.v = m.c.Seek([]byte(name))
		m.started = true
	}
	for m.k != nil && string(m.k) < name {
		m.k, m.v = m.c.Next()
	}
	if m.k != nil && string(m.k) == name {
		return m.v
	}
	return nil
}

// record returns the current record of one task.
func (r *Reader) record(env, task string) (taskRecord, bool, error) {
	ov, err := r.overlayOf()
	if err != nil {
		return taskRecord{}, false, err
	}
	if rec, ok := ov[TaskKey{env, task}]; ok {
		return rec, true, nil
	}
	eb := r.tx.Bucket(bucketTasks).Bucket([]byte(env))
	if eb == nil {
		return taskRecord{}, false, nil
	}
	v := eb.Get([]byte(task))
	if v == nil {
		return taskRecord{}, false, nil
	}
	rec, err := decodeTaskRecord(v)
	if err != nil {
		return rec, false, fmt.Errorf("task %s/%s: %w", env, task, err)
	}
	return rec, true, nil
}

// Task returns one task with its metadata, or ErrNotFound.
func (r *Reader) Task(env, task string) (TaskInfo, error) {
	rec, ok, err := r.record(env, task)
	if err != nil {
		return TaskInfo{}, err
	}
	if !ok {
		return TaskInfo{}, fmt.Errorf("task %s/%s: %w", env, task, ErrNotFound)
	}
	return taskInfo(env, task, rec, newMetaCursor(r.tx.Bucket(bucketCatalog).Bucket([]byte(env))))
}

// taskNames maps every task seq to its task.
func (r *Reader) taskNames() (map[uint64]TaskKey, error) {
	out := map[uint64]TaskKey{}
	err := r.tx.Bucket(bucketTaskSeqs).ForEach(func(k, v []byte) error {
		env, task, ok := splitNodeKey(v)
		if len(k) != 8 || !ok {
			return fmt.Errorf("task seq %x: %w", k, ErrCorrupt)
		}
		out[binary.BigEndian.Uint64(k)] = TaskKey{env, task}
		return nil
	})
	return out, err
}

func (r *Reader) taskSeq(env, task string) (uint64, bool) {
	rec, ok, err := r.record(env, task)
	return rec.Seq, ok && err == nil
}

// Groups calls fn with every group of one task: the round it belongs to, its group key as read
// ("" for the rollouts without one) and its state. It reads every group of the database.
func (r *Reader) Groups(env, task string, fn func(round int64, group string, g stats.Group) error) error {
	want, ok := r.taskSeq(env, task)
	if !ok {
		return nil
	}
	return r.tx.Bucket(bucketGroups).ForEach(func(k, v []byte) error {
		round, seq, group, ok := splitGroupKey(k)
		if !ok {
			return fmt.Errorf("group key %x: %w", k, ErrCorrupt)
		}
		if seq != want {
			return nil
		}
		g, err := decodeGroup(v)
		if err != nil {
			return fmt.Errorf("group %s/%s/%d/%s: %w", env, task, round, group, err)
		}
		return fn(round, group, g)
	})
}

// Rollouts calls fn for every stored rollout in arrival order. The StoredRollout passed to fn
// is reused between calls: copy it to keep it.
func (r *Reader) Rollouts(fn func(*StoredRollout) error) error {
	names, err := r.taskNames()
	if err != nil {
		return err
	}
	return r.rollouts(names, func(_ uint64, sr *StoredRollout) error { return fn(sr) })
}

func (r *Reader) rollouts(names map[uint64]TaskKey, fn func(taskSeq uint64, sr *StoredRollout) error) error {
	return r.rolloutRecords(func(seq, taskSeq uint64, sr *StoredRollout) error {
		key, ok := names[taskSeq]
		if !ok {
			return fmt.Errorf("rollout %d names task seq %d, which is not stored: %w", seq, taskSeq, ErrCorrupt)
		}
		sr.Env, sr.Task = key.Env, key.Task
		return fn(taskSeq, sr)
	})
}

// rolloutRecords decodes every stored rollout, chunk by chunk, leaving Env and Task to fn.
func (r *Reader) rolloutRecords(fn func(seq, taskSeq uint64, sr *StoredRollout) error) error {
	var sr StoredRollout
	return r.tx.Bucket(bucketRollouts).ForEach(func(k, v []byte) error {
		if len(k) != 8 {
			return fmt.Errorf("rollout key %x: %w", k, ErrCorrupt)
		}
		seq := binary.BigEndian.Uint64(k)
		for d := v; len(d) > 0; seq++ {
			n, w := binary.Uvarint(d)
			if w <= 0 || uint64(len(d)-w) < n {
				return fmt.Errorf("rollouts %x: %w", k, ErrCorrupt)
			}
			ts, err := decodeRollout(d[w:w+int(n)], &sr)
			if err != nil {
				return fmt.Errorf("rollout %d: %w", seq, err)
			}
			sr.Seq = seq
			if err := fn(seq, ts, &sr); err != nil {
				return err
			}
			d = d[w+int(n):]
		}
		return nil
	})
}

// TaskRollouts calls fn for every stored rollout of one task, in arrival order. It reads every
// rollout of the database (rollouts are stored in arrival order, not by task).
func (r *Reader) TaskRollouts(env, task string, fn func(*StoredRollout) error) error {
	want, ok := r.taskSeq(env, task)
	if !ok {
		return nil
	}
	return r.rolloutRecords(func(_, taskSeq uint64, sr *StoredRollout) error {
		if taskSeq != want {
			return nil
		}
		sr.Env, sr.Task = env, task
		return fn(sr)
	})
}

// Files returns every tracked file state, by ID.
func (r *Reader) Files() ([]FileState, error) {
	var out []FileState
	err := r.tx.Bucket(bucketFiles).ForEach(func(k, v []byte) error {
		f, err := decodeFile(v)
		if err != nil {
			return fmt.Errorf("file %x: %w", k, err)
		}
		out = append(out, f)
		return nil
	})
	return out, err
}

// Quarantine calls fn for every quarantine entry, oldest first.
func (r *Reader) Quarantine(fn func(QuarantineEntry) error) error {
	return r.tx.Bucket(bucketQuarantine).ForEach(func(k, v []byte) error {
		q, err := decodeQuarantine(v)
		if err != nil {
			return fmt.Errorf("quarantine %x: %w", k, err)
		}
		return fn(q)
	})
}

// Edges calls fn for every stored adjacency list.
func (r *Reader) Edges(fn func(NodeEdges) error) error {
	return r.tx.Bucket(bucketEdges).ForEach(func(k, v []byte) error {
		env, task, ok := splitNodeKey(k)
		if !ok {
			return fmt.Errorf("edges key %q: %w", k, ErrCorrupt)
		}
		edges, err := decodeEdges(v)
		if err != nil {
			return fmt.Errorf("edges of %s/%s: %w", env, task, err)
		}
		return fn(NodeEdges{Node: TaskKey{env, task}, Edges: edges})
	})
}

// Answers calls fn for every stored answer, by request ID. answer is a copy.
func (r *Reader) Answers(fn func(id string, answer []byte) error) error {
	return r.tx.Bucket(bucketRequests).ForEach(func(k, v []byte) error {
		answer, err := answerOf(r.tx, string(k), v)
		if err != nil {
			return err
		}
		return fn(string(k), answer)
	})
}

// Answer returns the stored answer of request id, or ErrNotFound.
func (r *Reader) Answer(id string) ([]byte, error) {
	v := r.tx.Bucket(bucketRequests).Get([]byte(id))
	if v == nil {
		return nil, fmt.Errorf("answer %q: %w", id, ErrNotFound)
	}
	return answerOf(r.tx, id, v)
}

// PredictorState returns a copy of the predictor state stored by the last StoreAnswer that
// was given one, or nil when none was. Storage does not read it: the scheduler encodes it (its
// per-environment drift offsets).
func (r *Reader) PredictorState() []byte {
	return bytes.Clone(r.tx.Bucket(bucketMeta).Get(metaPredictorState))
}

// Convenience readers, each in its own read transaction.

// Counters returns the whole-database counters.
func (db *DB) Counters() (c Counters, err error) {
	err = db.View(func(r *Reader) error { c, err = r.Counters(); return err })
	return c, err
}

// Generation returns the ID of the last committed write transaction. Every commit moves it, so
// whatever is read from the database is the same while it stays the same.
func (db *DB) Generation() (gen uint64, err error) {
	err = db.view(func(tx *bolt.Tx) error { gen = uint64(tx.ID()); return nil })
	return gen, err
}

// Envs returns the statistics of every environment.
func (db *DB) Envs() (m map[string]stats.Env, err error) {
	err = db.View(func(r *Reader) error { m, err = r.Envs(); return err })
	return m, err
}

// Files returns every tracked file state.
func (db *DB) Files() (f []FileState, err error) {
	err = db.View(func(r *Reader) error { f, err = r.Files(); return err })
	return f, err
}

// Answer returns the stored answer of request id, or an error wrapping ErrNotFound.
func (db *DB) Answer(id string) (a []byte, err error) {
	err = db.View(func(r *Reader) error { a, err = r.Answer(id); return err })
	return a, err
}

// PredictorState returns the stored predictor state (see Reader.PredictorState), nil when
// none is stored.
func (db *DB) PredictorState() (state []byte, err error) {
	err = db.View(func(r *Reader) error { state = r.PredictorState(); return nil })
	return state, err
}

// Counter names in the counters bucket.
var (
	ctrRollouts    = []byte("rollouts")
	ctrQuarantined = []byte("quarantined")
	ctrDuplicates  = []byte("duplicates")
	ctrClipped     = []byte("clipped")
	ctrAnswered    = []byte("requests_answered")
	ctrLastRequest = []byte("last_request")
	ctrRound       = []byte("round")
	ctrEdgeWrites  = []byte("edge_writes")
	ctrCatWrites   = []byte("catalog_writes")
	ctrEdgesStale  = []byte("edges_pending")
	ctrUnstored    = []byte("quarantined_unstored")
	ctrListsStale  = []byte("lists_pending")
)

func readCounters(tx *bolt.Tx) (Counters, error) {
	b := tx.Bucket(bucketCounters)
	get := func(k []byte) int64 {
		if v := b.Get(k); len(v) == 8 {
			return int64(binary.BigEndian.Uint64(v))
		}
		return 0
	}
	return Counters{
		Rollouts: get(ctrRollouts), Quarantined: get(ctrQuarantined), Duplicates: get(ctrDuplicates),
		Clipped: get(ctrClipped), RequestsAnswered: get(ctrAnswered), Round: get(ctrRound),
		EdgeWrites: get(ctrEdgeWrites), CatalogWrites: get(ctrCatWrites), LastRequest: string(b.Get(ctrLastRequest)),
		EdgesPending: get(ctrEdgesStale) != 0, Unstored: get(ctrUnstored), ListsPending: get(ctrListsStale) != 0,
	}, nil
}

func writeCounters(tx *bolt.Tx, c Counters) error {
	b := tx.Bucket(bucketCounters)
	for k, v := range map[string]int64{string(ctrRollouts): c.Rollouts, string(ctrQuarantined): c.Quarantined,
		string(ctrDuplicates): c.Duplicates, string(ctrClipped): c.Clipped, string(ctrAnswered): c.RequestsAnswered,
		string(ctrRound): c.Round, string(ctrEdgeWrites): c.EdgeWrites, string(ctrCatWrites): c.CatalogWrites,
		string(ctrEdgesStale): boolInt(c.EdgesPending), string(ctrUnstored): c.Unstored,
		string(ctrListsStale): boolInt(c.ListsPending)} {
		if err := b.Put([]byte(k), u64key(uint64(v))); err != nil {
			return fmt.Errorf("put counter %s: %w", k, err)
		}
	}
	if err := b.Put(ctrLastRequest, []byte(c.LastRequest)); err != nil {
		return fmt.Errorf("put counter last_request: %w", err)
	}
	return nil
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
