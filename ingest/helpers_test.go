package ingest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// env is an exchange directory with a database, for tests.
type env struct {
	t   testing.TB
	dir string
	db  *storage.DB
	in  *Ingester
	opt Options
}

func newEnv(t testing.TB, opt Options) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), opt: opt}
	e.open()
	t.Cleanup(e.close)
	return e
}

// close checks and closes the database (once).
func (e *env) close() {
	if e.db == nil {
		return
	}
	storagetest.MustCheck(e.t, e.db, e.dir)
	if err := e.db.Close(); err != nil {
		e.t.Errorf("close db: %v", err)
	}
	e.db = nil
}

func (e *env) open() {
	e.t.Helper()
	db, err := storage.Open(filepath.Join(e.dir, "envsched.db"), storage.Options{})
	if err != nil {
		e.t.Fatalf("open db: %v", err)
	}
	e.db = db
	if e.in, err = New(db, e.dir, e.opt); err != nil {
		e.t.Fatalf("new ingester: %v", err)
	}
}

// reopen closes and opens the database and a new ingester, as a restart does.
func (e *env) reopen() {
	e.t.Helper()
	if err := e.db.Close(); err != nil {
		e.t.Fatal(err)
	}
	e.open()
}

func (e *env) path(rel string) string { return filepath.Join(e.dir, filepath.FromSlash(rel)) }

// write replaces the file rel with data (not atomically: as a trainer appending in place would).
func (e *env) write(rel, data string) {
	e.t.Helper()
	p := e.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) append(rel, data string) {
	e.t.Helper()
	p := e.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) scan() Summary {
	e.t.Helper()
	s, err := e.in.Scan(context.Background())
	if err != nil {
		e.t.Fatalf("scan: %v", err)
	}
	return s
}

// rollouts returns the stored rollouts in arrival order.
func (e *env) rollouts() []storage.StoredRollout {
	e.t.Helper()
	var out []storage.StoredRollout
	err := e.db.View(func(r *storage.Reader) error {
		return r.Rollouts(func(sr *storage.StoredRollout) error { out = append(out, *sr); return nil })
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) quarantine() []storage.QuarantineEntry {
	e.t.Helper()
	var out []storage.QuarantineEntry
	err := e.db.View(func(r *storage.Reader) error {
		return r.Quarantine(func(q storage.QuarantineEntry) error { out = append(out, q); return nil })
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) counters() storage.Counters {
	e.t.Helper()
	c, err := e.db.Counters()
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// tasks returns the stored rollouts as "env/task=reward" strings, sorted.
func (e *env) tasks() []string {
	e.t.Helper()
	var out []string
	for _, r := range e.rollouts() {
		out = append(out, fmt.Sprintf("%s/%s=%g", r.Env, r.Task, r.Reward))
	}
	sort.Strings(out)
	return out
}

// reasons returns the quarantine entries as "path@offset:reason" strings, in order.
func (e *env) reasons() []string {
	e.t.Helper()
	var out []string
	for _, q := range e.quarantine() {
		out = append(out, fmt.Sprintf("%s@%d:%s", q.Path, q.Offset, q.Reason))
	}
	return out
}
