package storage

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// A damaged database file (cut short, pages overwritten) makes bbolt panic or fault on the page
// it reads, inside whatever transaction touches it, in whatever goroutine. Every transaction of
// this package and bbolt's Open run under guard, which turns such a panic, and a memory fault on
// the mapped file, into a *DamagedError; a panic raised by code outside bbolt and this package
// (a caller's callback) is raised again unchanged: it is a bug, not damage.

// DamagedError says that the database file is damaged and what to do. It unwraps to ErrCorrupt.
type DamagedError struct {
	Path  string // the database file (the original, when a copy of it was read)
	Cause string // what bbolt found
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("database %s is damaged (%s): restore it from a backup, or move it aside and start "+
		"with a new one (envsched run or ingest reads every rollout file into it again; the stored answers "+
		"are lost)", e.Path, e.Cause)
}

// Unwrap returns ErrCorrupt.
func (e *DamagedError) Unwrap() error { return ErrCorrupt }

// guard runs fn; a panic or memory fault raised in bbolt (or in this package's decoding) becomes
// a *DamagedError naming path.
func guard(path string, fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			if !fromStore(v) {
				panic(v)
			}
			err = &DamagedError{Path: path, Cause: damage(v)}
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return fn()
}

// damage says what a panic raised in bbolt found. A fault on the mapped file (a page past the
// end of a file cut short, met before checkLength could look, as in a writable open that loads
// the freelist) said only "runtime error: invalid memory address or nil pointer dereference".
func damage(v any) string {
	var addr interface{ Addr() uintptr }
	if e, ok := v.(error); ok && errors.As(e, &addr) {
		return "a page lies past the end of the file or cannot be read: it was cut short or overwritten"
	}
	return fmt.Sprint(v)
}

// fromStore reports whether the panic being recovered was raised by bbolt or by this package
// (the first frame below the panic that is not the runtime's), or is a memory fault.
func fromStore(v any) bool {
	var addr interface{ Addr() uintptr }
	if e, ok := v.(error); ok && errors.As(e, &addr) {
		return true // a fault on the mapped file: a page past its end
	}
	pc := make([]uintptr, 64)
	n := runtime.Callers(3, pc)
	frames := runtime.CallersFrames(pc[:n])
	panicking := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic" || f.Function == "runtime.sigpanic":
			panicking = true
		case panicking && !strings.HasPrefix(f.Function, "runtime."):
			return strings.HasPrefix(f.Function, "go.etcd.io/bbolt") ||
				strings.HasPrefix(f.Function, "github.com/envsched/envsched/storage.")
		}
		if !more {
			return false
		}
	}
}

// view and update are bbolt's View and Update under guard.
func (db *DB) view(fn func(*bolt.Tx) error) error {
	return guard(db.name, func() error { return db.bolt.View(fn) })
}

func (db *DB) update(fn func(*bolt.Tx) error) error {
	return guard(db.name, func() error { return db.bolt.Update(fn) })
}

// checkLength fails when the file is shorter than the pages its meta page counts (a file cut
// short): bbolt would fault on the first page past the end.
func (db *DB) checkLength() error {
	fi, err := os.Stat(db.path)
	if err != nil {
		return err
	}
	return db.view(func(tx *bolt.Tx) error {
		if need := tx.Size(); fi.Size() < need {
			return &DamagedError{Path: db.name, Cause: fmt.Sprintf("the file has %d bytes, its pages need %d: "+
				"it was cut short", fi.Size(), need)}
		}
		spotCheck(tx)
		return nil
	})
}

// spotCheck reads the first and last path of every top-level bucket: a few pages, each of
// which bbolt checks names itself, so that a file whose pages were overwritten is found at
// open (a panic that db.view turns into a *DamagedError) rather than by whichever command
// first reads one of them. It is a cheap spot check, not a full one (see Check).
func spotCheck(tx *bolt.Tx) {
	_ = tx.ForEach(func(_ []byte, b *bolt.Bucket) error {
		c := b.Cursor()
		c.First()
		c.Last()
		return nil
	})
}
