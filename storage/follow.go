package storage

// Follower hands its owner the task records that this DB's commits wrote since the owner last
// looked, so that the owner can keep every task's statistics in memory and update them, instead
// of reading all of them at each request. Only writes made through this DB (this process) are
// seen: another process cannot write while this one holds the file.
//
// A Follower is not safe for concurrent use by its owner; commits may run concurrently with it.
type Follower struct {
	db *DB
	// guarded by db.writeMu:
	on      bool                 // subscribed: commits record into changed
	changed map[TaskKey]TaskInfo // the newest record of each task written since the last View
}

// Follow returns a Follower of db. It records nothing until its first View.
func (db *DB) Follow() *Follower { return &Follower{db: db} }

// View runs fn with a Reader over one read transaction and the records of every task written
// by a commit of this DB since the previous View (metadata not filled in: Env, Task, InCatalog,
// Stats and Seq), which are exactly the commits the Reader sees beyond those of the previous
// View. all is true on the first View and after a View whose fn failed: the caller must then
// read every task from r (changed is nil). An error from fn is returned.
func (f *Follower) View(fn func(r *Reader, changed []TaskInfo, all bool) error) error {
	// Holding the write lock while the read transaction begins makes its snapshot exactly the
	// commits recorded so far: a commit publishes its records before it releases the lock.
	f.db.writeMu.Lock()
	tx, err := f.db.begin() // reads the meta page
	if err != nil {
		f.db.writeMu.Unlock()
		return err
	}
	all := !f.on
	var changed []TaskInfo
	if f.on {
		changed = make([]TaskInfo, 0, len(f.changed))
		for _, ti := range f.changed {
			changed = append(changed, ti)
		}
	} else {
		f.db.followers = append(f.db.followers, f)
	}
	f.on, f.changed = true, map[TaskKey]TaskInfo{}
	f.db.writeMu.Unlock()
	defer f.db.rollback(tx)
	err = f.db.guard(func() error { // a damaged file is an error here too, as in db.view
		return fn(&Reader{tx: tx, cfg: f.db.cfg, cache: &f.db.logCache, db: f.db}, changed, all)
	})
	if err != nil {
		f.Close() // what fn was given is lost with it: the next View reads everything again
		return err
	}
	return nil
}

// Close stops recording; the next View reads everything again.
func (f *Follower) Close() {
	f.db.writeMu.Lock()
	defer f.db.writeMu.Unlock()
	if !f.on {
		return
	}
	f.on, f.changed = false, nil
	for i, o := range f.db.followers {
		if o == f {
			f.db.followers = append(f.db.followers[:i], f.db.followers[i+1:]...)
			break
		}
	}
}

// publish records, for every follower, the task records a committed transaction wrote. The
// caller holds db.writeMu.
func (db *DB) publish(w logWrite) {
	for _, f := range db.followers {
		for _, kr := range w.recs {
			ti := TaskInfo{InCatalog: kr.rec.InCatalog, Stats: kr.rec.Stats, Seq: kr.rec.Seq}
			ti.Env, ti.Task.Task = kr.key.Env, kr.key.Task
			f.changed[kr.key] = ti
		}
	}
}
