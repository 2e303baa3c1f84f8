package storage

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"syscall"

	bolt "go.etcd.io/bbolt"

	"github.com/envsched/envsched/stats"
)

// Check verifies the whole database in one read transaction and returns every fault found,
// joined: bbolt's own consistency check; every task's statistics, every group and every
// environment's statistics equal a recomputation from the stored rollouts; the rollouts, clipped
// and quarantined counters equal the stored records; every rollout id is indexed; the
// calibration ledger's totals, cells, bins and answers count the same groups, and every open
// prediction has an incomplete group. When dir is
// not empty it is the exchange directory, and every tracked file that is still there (same
// device and inode) must be at least as long as its committed offset. Check reads every rollout:
// it is for tests and `envsched check`-like tools, not for start-up.
func (db *DB) Check(dir string) error {
	var errs []error
	err := db.view(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			errs = append(errs, fmt.Errorf("bbolt: %w", err))
		}
		r := &Reader{tx: tx, cfg: db.cfg}
		errs = append(errs, checkStats(r)...)
		if dir != "" {
			errs = append(errs, checkOffsets(r, dir)...)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("check %s: %w", db.path, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("check %s: %w", db.path, errors.Join(errs...))
	}
	return nil
}

// recount is what the stored rollouts say the statistics must be.
type recount struct {
	tasks    map[TaskKey]*stats.Task
	groups   map[string]*stats.Group // by groups-bucket key
	rollouts int64
	clipped  int64
	ids      map[string]bool
	dupIDs   []string // rollout ids stored twice
}

func checkStats(r *Reader) []error {
	rc, err := recountRollouts(r)
	if err != nil {
		return []error{err}
	}
	errs := compareTasks(r, rc)
	errs = append(errs, compareGroups(r, rc)...)
	errs = append(errs, compareEnvs(r, rc)...)
	errs = append(errs, compareCounters(r, rc)...)
	for _, id := range rc.dupIDs {
		errs = append(errs, fmt.Errorf("rollout id %q is stored more than once", id))
	}
	errs = append(errs, checkCalib(r)...)
	errs = append(errs, checkAnswers(r)...)
	return append(errs, checkIDIndex(r, rc)...)
}

// checkIDIndex checks that every stored rollout id is in the persisted dedupe index: a hash has
// at least as many entries as there are distinct stored ids with that hash.
func checkIDIndex(r *Reader, rc *recount) []error {
	var x idIndex
	if err := x.load(r.tx); err != nil {
		return []error{err}
	}
	perHash := map[uint64]int{}
	for id := range rc.ids {
		perHash[hashID(id)]++
	}
	var errs []error
	for id := range rc.ids {
		if h := hashID(id); x.count(h) < perHash[h] {
			errs = append(errs, fmt.Errorf("rollout id %q is not in the dedupe index (%d entries under its hash, %d ids)",
				id, x.count(h), perHash[h]))
		}
	}
	return errs
}

func recountRollouts(r *Reader) (*recount, error) {
	rc := &recount{tasks: map[TaskKey]*stats.Task{}, groups: map[string]*stats.Group{}, ids: map[string]bool{}}
	names, err := r.taskNames()
	if err != nil {
		return nil, err
	}
	err = r.rollouts(names, func(taskSeq uint64, sr *StoredRollout) error {
		key := TaskKey{sr.Env, sr.Task}
		t := rc.tasks[key]
		if t == nil {
			t = new(stats.Task)
			rc.tasks[key] = t
		}
		gk := string(groupKey(sr.Round, taskSeq, sr.Group))
		g := rc.groups[gk]
		if g == nil {
			g = new(stats.Group)
			rc.groups[gk] = g
		}
		t.Add(r.cfg.Reward.Normalise(sr.Reward), sr.Round, sr.Step, sr.HasStep, g, r.cfg.Decay)
		rc.rollouts++
		if sr.Clipped {
			rc.clipped++
		}
		if sr.RolloutID != "" {
			if rc.ids[sr.RolloutID] {
				rc.dupIDs = append(rc.dupIDs, sr.RolloutID)
			}
			rc.ids[sr.RolloutID] = true
		}
		return nil
	})
	return rc, err
}

func compareTasks(r *Reader, rc *recount) []error {
	var errs []error
	err := r.Tasks(false, func(ti TaskInfo) error {
		want := stats.Task{}
		if t := rc.tasks[TaskKey{ti.Env, ti.Task.Task}]; t != nil {
			want = *t
		}
		want.Chosen, want.LastChosen = ti.Stats.Chosen, ti.Stats.LastChosen
		if want != ti.Stats {
			errs = append(errs, fmt.Errorf("task %s/%s: stored stats %+v, recomputed %+v", ti.Env, ti.Task.Task, ti.Stats, want))
		}
		delete(rc.tasks, TaskKey{ti.Env, ti.Task.Task})
		return nil
	})
	for k := range rc.tasks {
		errs = append(errs, fmt.Errorf("task %s/%s has rollouts but no task record", k.Env, k.Task))
	}
	if err != nil {
		errs = append(errs, err)
	}
	return errs
}

func compareGroups(r *Reader, rc *recount) []error {
	var errs []error
	n := 0
	err := r.tx.Bucket(bucketGroups).ForEach(func(k, v []byte) error {
		n++
		g, err := decodeGroup(v)
		if err != nil {
			return err
		}
		if w := rc.groups[string(k)]; w == nil || *w != g {
			errs = append(errs, fmt.Errorf("group %x: stored %+v, recomputed %+v", k, g, w))
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	if n != len(rc.groups) {
		errs = append(errs, fmt.Errorf("%d groups stored, %d recomputed", n, len(rc.groups)))
	}
	return errs
}

// compareEnvs recomputes every environment from its stored tasks (which compareTasks tied to
// the rollouts). Sums of rewards are compared with a relative tolerance: they were accumulated
// in a different order.
func compareEnvs(r *Reader, rc *recount) []error {
	want := map[string]*stats.Env{}
	err := r.Tasks(false, func(ti TaskInfo) error {
		e := want[ti.Env]
		if e == nil {
			e = new(stats.Env)
			want[ti.Env] = e
		}
		e.Apply(stats.Task{}, ti.Stats, true)
		return nil
	})
	if err != nil {
		return []error{err}
	}
	got, err := r.Envs()
	if err != nil {
		return []error{err}
	}
	var errs []error
	for name, w := range want {
		g := got[name]
		if !envEqual(g, *w) {
			errs = append(errs, fmt.Errorf("env %s: stored %+v, recomputed %+v", name, g, *w))
		}
		delete(got, name)
	}
	for name := range got {
		errs = append(errs, fmt.Errorf("env %s is stored but has no tasks", name))
	}
	return errs
}

func envEqual(a, b stats.Env) bool {
	sa, sb := a.Sum, b.Sum
	a.Sum, b.Sum = 0, 0
	return a == b && math.Abs(sa-sb) <= 1e-9*math.Max(1, math.Abs(sb))
}

func compareCounters(r *Reader, rc *recount) []error {
	c, err := r.Counters()
	if err != nil {
		return []error{err}
	}
	var errs []error
	if c.Rollouts != rc.rollouts {
		errs = append(errs, fmt.Errorf("counter rollouts %d, stored rollouts %d", c.Rollouts, rc.rollouts))
	}
	if c.Clipped != rc.clipped {
		errs = append(errs, fmt.Errorf("counter clipped %d, stored clipped rollouts %d", c.Clipped, rc.clipped))
	}
	q := int64(r.tx.Bucket(bucketQuarantine).Stats().KeyN)
	if c.Quarantined != q+c.Unstored {
		errs = append(errs, fmt.Errorf("counter quarantined %d, stored entries %d and %d unstored", c.Quarantined, q, c.Unstored))
	}
	a := int64(r.tx.Bucket(bucketRequests).Stats().KeyN)
	if c.RequestsAnswered != a {
		errs = append(errs, fmt.Errorf("counter requests_answered %d, stored answers %d", c.RequestsAnswered, a))
	}
	return errs
}

func checkOffsets(r *Reader, dir string) []error {
	files, err := r.Files()
	if err != nil {
		return []error{err}
	}
	var errs []error
	for _, f := range files {
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil || f.Gone {
			continue
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || uint64(st.Dev) != f.Dev || st.Ino != f.Ino {
			continue
		}
		if f.Kind == KindRollouts && f.Offset > fi.Size() {
			errs = append(errs, fmt.Errorf("file %s: committed offset %d past its size %d", f.Path, f.Offset, fi.Size()))
		}
	}
	return errs
}
