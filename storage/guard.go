package storage

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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
	// Overwritten says that another database's bytes were copied over the open file (see
	// txWatch): the file may be whole, it is just not the one envsched was serving.
	Overwritten bool
	// InFlight says that the bytes were copied over the file while a commit was being written
	// into it (see DB.landedAlone): the commit's pages went into the copy.
	InFlight bool
}

func (e *DamagedError) Error() string {
	if e.InFlight {
		return fmt.Sprintf("database %s was overwritten in place while envsched was writing a commit into it "+
			"(%s): stopping without reading or writing it any further. That commit's pages went into the "+
			"bytes copied over it, which are damaged now: stop envsched before restoring a backup, restore "+
			"it again, then start envsched (if nothing was restored, find what else writes into that file)",
			e.Path, e.Cause)
	}
	if e.Overwritten {
		return fmt.Sprintf("database %s was overwritten in place while envsched had it open (%s): stopping "+
			"without reading or writing it any further. If a backup was restored over it, start envsched "+
			"again to serve the restored file (stop envsched before restoring one: writing into a file it "+
			"has open damages the copy); if not, find what else writes into that file", e.Path, e.Cause)
	}
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

// view runs fn over a read transaction of db's own begin and rollback (bbolt's View rolls
// back unconditionally, and after a begin that faulted elsewhere that rollback never returns:
// see DB.begin); fn runs under db.guard. update is bbolt's Update under db.guard. Both are
// refused when the file's newest transaction is not one this process committed (DB.sameTx).
func (db *DB) view(fn func(*bolt.Tx) error) error {
	tx, err := db.begin()
	if err != nil {
		return err
	}
	defer db.rollback(tx)
	return db.guard(func() error { return fn(tx) })
}

// begin begins a read transaction under db.guard, refused when the file's newest transaction
// is not one this process committed (DB.sameTx). bbolt's Begin takes its meta lock and its
// mmap read lock, then reads the meta pages; on a file cut short under the running process
// between db.guard's look at its length and that read (a window of microseconds), the read
// faults with both locks held and no defer releases them. Every read transaction's rollback
// takes the meta lock, so every transaction open at that moment, in any goroutine, would wait
// in its rollback for ever: a read transaction begun while another is open in the same
// goroutine (Reader.Beside) hung its own caller (review14). So a
// begin that faulted is recorded (locksLost), and from then on DB.rollback abandons
// transactions instead of rolling them back: the file is damaged, every later transaction is
// refused (DB.guard), and Close does not wait for bbolt's locks (closeBroken).
func (db *DB) begin() (*bolt.Tx, error) {
	var tx *bolt.Tx
	called, returned := false, false
	err := db.guard(func() (err error) {
		called = true
		if beforeBegin != nil {
			beforeBegin(db)
		}
		before := db.txs.last.Load()
		tx, err = db.bolt.Begin(false)
		returned = true
		if err != nil {
			return err
		}
		if d := db.sameTx(tx, before); d != nil {
			db.rollback(tx)
			tx = nil
			return d
		}
		return nil
	})
	if called && !returned {
		db.locksLost.Store(true)
	}
	if err != nil {
		return nil, err
	}
	return tx, nil
}

// beforeBegin, when set (by tests only), runs in DB.begin after db.guard looked at the file's
// length and before bbolt's Begin: it cuts the file short in that window.
var beforeBegin func(*DB)

// rollback ends a read transaction of db.begin, or abandons it when a begin faulted holding
// bbolt's locks (see DB.begin): its rollback would wait for those locks for ever.
func (db *DB) rollback(tx *bolt.Tx) {
	if db.locksLost.Load() {
		return
	}
	tx.Rollback()
}

func (db *DB) update(fn func(*bolt.Tx) error) error {
	// One commit at a time from its check to landedAlone's look after it (bbolt holds its writer
	// lock only inside Update): a commit after it would change the meta pages too.
	db.txs.mu.Lock()
	defer db.txs.mu.Unlock()
	var id uint64
	var metas []byte
	err := db.guard(func() error {
		return db.bolt.Update(func(tx *bolt.Tx) error {
			if d := db.sameTx(tx, 0); d != nil {
				return d
			}
			id = uint64(tx.ID())
			db.txs.pending.Store(id)
			if err := fn(tx); err != nil {
				return err
			}
			if err := db.writeInstance(tx); err != nil {
				return err
			}
			if err := db.stillSame(id - 1); err != nil {
				return err // overwritten while fn ran: write none of its pages
			}
			metas = db.readMetas()
			if h := db.txs.afterCheck; h != nil {
				h()
			}
			return nil
		})
	})
	if err == nil && id != 0 {
		if d := db.landedAlone(id, metas); d != nil {
			db.broken.CompareAndSwap(nil, d)
			err = d
		}
	}
	if err != nil && id != 0 {
		db.txs.wrote.CompareAndSwap(id, 0) // not written unless it landed (below): the next commit writes it
	}
	if err == nil && id != 0 {
		db.txs.last.Store(id)
	} else if id != 0 && db.txs.file != nil {
		// A commit that failed after its meta page was written (its fsync, say) did land: the
		// next transaction must not take the file's newest transaction for another's.
		var d *DamagedError
		if m, ok := newestMeta(db.txs.file, int(db.metaBytes/2)); ok && m.txid == id && !errors.As(err, &d) {
			db.txs.last.Store(id)
			if !db.txs.found && db.txs.wrote.Load() == 0 {
				db.txs.wrote.Store(id) // landed with the instance id, if it was this commit's to write
			}
		}
	}
	return err
}

// loadInstance reads the database's instance id, or chooses one for the first commit to write
// (see txWatch). Open calls it once the file's length was checked: it reads the meta bucket.
func (db *DB) loadInstance() error {
	err := db.guard(func() error {
		return db.bolt.View(func(tx *bolt.Tx) error {
			if b := tx.Bucket(bucketMeta); b != nil {
				if id := b.Get(metaInstance); id != nil {
					db.txs.instance, db.txs.found = bytes.Clone(id), true
				}
			}
			return nil
		})
	})
	if err == nil && !db.txs.found {
		db.txs.instance = make([]byte, 16)
		rand.Read(db.txs.instance)
	}
	return err
}

// writeInstance puts the instance id chosen at open into tx, the first commit of a process
// that found none in the file (see txWatch), once fn made the meta bucket.
func (db *DB) writeInstance(tx *bolt.Tx) error {
	if db.txs.found || db.txs.wrote.Load() != 0 {
		return nil
	}
	b := tx.Bucket(bucketMeta)
	if b == nil {
		return nil
	}
	db.txs.wrote.Store(uint64(tx.ID()))
	return b.Put(metaInstance, db.txs.instance)
}

// txWatch keeps the id of the newest transaction this process committed to the file (or found
// in it at open), so that a file overwritten in place by another database while it is open is
// found by its meta page before anything is read from it or written into it.
//
// bbolt maps the file shared and reads its meta pages from the mapping at each transaction's
// begin, so bytes copied over the file (`cp backup.db envsched.db` or `dd conv=notrunc`, which
// keep the inode) are what the next transaction reads: with a file as long or longer the
// daemon went on serving from the other database's pages (its rollouts counted in
// rollouts_seen, its answers missing) and committed pages chosen from its own free list into
// the copy, which was left damaged ("edges of ...: stored value is corrupt"). Only this process
// writes the file (bbolt's lock), so its newest transaction can only be one this process
// committed.
//
// Another database can have made as many transactions (two folders' databases fed alike), so
// the ids alone do not tell it (review15). Each database also holds a random instance id (meta
// key instance_id), written by the first commit of a process that found none: every
// transaction reads it from its own snapshot and compares it with the one found or chosen at
// open. A copy of the same database (a backup, a snapshot, compact's output) holds the same
// id: it is the same data, told apart by its transaction ids when older.
type txWatch struct {
	last     atomic.Uint64 // the newest transaction committed by this process, or found at open
	pending  atomic.Uint64 // the write transaction being committed: a view begun meanwhile may see it
	file     *os.File      // the file, opened for reading the meta pages before a commit writes
	instance []byte        // the database's instance id, found at open or chosen to be written
	found    bool          // instance was in the file at open
	wrote    atomic.Uint64 // the transaction that writes instance (found false), 0 before it begins
	mu       sync.Mutex    // held by update around a commit and landedAlone's look after it
	// afterCheck, for tests, runs after a commit's last check (stillSame) and before bbolt
	// writes its pages.
	afterCheck func()
}

// metaInstance is the meta key of the database's random instance id (see txWatch).
var metaInstance = []byte("instance_id")

// instanceOK reports whether tx, checked by sameTx, holds the database's instance id: the id
// found at open, or, when none was, none until the transaction that writes it.
func (db *DB) instanceOK(tx *bolt.Tx) bool {
	if db.txs.instance == nil { // Open has not looked yet (checkLength's read)
		return true
	}
	var got []byte
	if b := tx.Bucket(bucketMeta); b != nil {
		got = b.Get(metaInstance)
	}
	if bytes.Equal(got, db.txs.instance) {
		return true
	}
	if got != nil || db.txs.found {
		return false
	}
	w := db.txs.wrote.Load()
	return w == 0 || uint64(tx.ID()) < w
}

// startTxWatch records the file's newest transaction at open.
func (db *DB) startTxWatch() error {
	err := db.guard(func() error {
		return db.bolt.View(func(tx *bolt.Tx) error {
			db.txs.last.Store(uint64(tx.ID()))
			return nil
		})
	})
	if err != nil {
		return err
	}
	if f, ferr := os.Open(db.path); ferr == nil {
		if fi, serr := f.Stat(); serr == nil && fi.Mode().IsRegular() {
			db.txs.file = f
		} else {
			f.Close()
		}
	}
	return nil
}

// sameTx returns the damage of a file overwritten in place when tx, just begun, reads a newest
// transaction this process did not commit; nil otherwise. before is txs.last as loaded just
// before tx began. Commits run beside reads and beside each other's bookkeeping: a commit's
// id is stored in txs.pending before its pages are written and in txs.last only after its
// Update returned. So a write transaction's predecessor is the last commit or the one whose
// id is not yet stored as last (pending); a read transaction sees a commit that had landed
// when it began (at least before) and had begun by now (at most pending, or last): a commit
// landing between the read's begin and this check left it on a transaction before the newest
// (review15: reads beside commits were refused as overwritten, and the database with them).
func (db *DB) sameTx(tx *bolt.Tx, before uint64) *DamagedError {
	id, last, pending := uint64(tx.ID()), db.txs.last.Load(), db.txs.pending.Load()
	seen := id
	if tx.Writable() {
		seen = id - 1
		if seen == last || seen == pending {
			return db.sameInstance(tx)
		}
	} else if id >= before && id <= max(last, pending) {
		return db.sameInstance(tx)
	}
	return db.overwritten(seen, last)
}

// sameInstance returns the damage of a file overwritten in place by another database when tx
// does not hold this one's instance id (see txWatch); nil otherwise.
func (db *DB) sameInstance(tx *bolt.Tx) *DamagedError {
	if db.instanceOK(tx) {
		return nil
	}
	return &DamagedError{Path: db.name, Overwritten: true, Cause: "it now holds another database's instance id " +
		"(as many transactions as this one, other data)"}
}

// stillSame reads the meta pages from the file itself just before a commit writes its pages:
// a file overwritten while the transaction was being filled is not written into. last is the
// transaction the commit follows.
func (db *DB) stillSame(last uint64) error {
	if db.txs.file == nil {
		return nil
	}
	m, ok := newestMeta(db.txs.file, int(db.metaBytes/2))
	if ok && m.txid == last {
		return nil
	}
	return db.overwritten(m.txid, last)
}

// metaSpan is the bytes of a meta page that readMetas and landedAlone compare: the page header
// and the meta (see newestMeta).
const metaSpan = 16 + 64

// readMetas returns the bytes of the file's two meta pages (metaSpan each) as the file holds
// them now, nil when they cannot be read.
func (db *DB) readMetas() []byte {
	if db.txs.file == nil {
		return nil
	}
	b := make([]byte, 2*metaSpan)
	if _, err := db.txs.file.ReadAt(b[:metaSpan], 0); err != nil {
		return nil
	}
	if _, err := db.txs.file.ReadAt(b[metaSpan:], db.metaBytes/2); err != nil {
		return nil
	}
	return b
}

// landedAlone returns the damage of a file overwritten in place while commit id was being
// written into it, nil otherwise. before is readMetas' bytes just before bbolt wrote the commit
// (after stillSame). A commit writes its meta page into slot id%2 and leaves the other alone:
// that other page must still hold the bytes it held, and the written one this commit. Bytes
// copied over the file after stillSame's look and before the commit's last write (`cp`
// writes from the start, meta pages first) got the commit's pages and its meta page, the copy's
// meta page left beside it: the newest transaction was then this process's own, so sameTx
// passed, and the copy was found, if at all, by its instance id, with a message that said to
// start again to serve the restored file, which was half the copy and half the commit (a
// restart served it without a word; hostile15's leftover). The copy cannot be kept whole
// (another process's writes cannot be held off), but envsched now stops saying it is damaged.
func (db *DB) landedAlone(id uint64, before []byte) *DamagedError {
	if before == nil {
		return nil
	}
	after := db.readMetas()
	if after == nil {
		return nil
	}
	mine, other := int(id%2), int(1-id%2)
	span := func(b []byte, i int) []byte { return b[i*metaSpan : (i+1)*metaSpan] }
	ps := int(db.metaBytes / 2)
	laid := make([]byte, ps+metaSpan) // the two pages where newestMeta reads them
	copy(laid, span(after, 0))
	copy(laid[ps:], span(after, 1))
	m, ok := newestMeta(bytes.NewReader(laid), ps)
	if ok && m.txid == id && bytes.Equal(span(after, other), span(before, other)) &&
		!bytes.Equal(span(after, mine), span(before, mine)) {
		return nil
	}
	return &DamagedError{Path: db.name, Overwritten: true, InFlight: true, Cause: fmt.Sprintf("the meta pages "+
		"changed under commit %d, which did not write them", id)}
}

func (db *DB) overwritten(found, last uint64) *DamagedError {
	return &DamagedError{Path: db.name, Overwritten: true, Cause: fmt.Sprintf("its newest transaction is now %d, "+
		"while the last this process committed or found at open is %d", found, last)}
}

// guard runs fn under guard, unless a transaction of db met damage before: then it returns that
// damage again without touching the file. A panic or fault inside bbolt can leave bbolt's own
// locks held: a fault while a transaction begins (its meta page read from a file cut short
// under the running process) leaves the meta and mmap locks taken, and a writable
// transaction's rollback reads its freelist page again and faults a second time, leaving the
// writer's lock taken. The next transaction, and bbolt's Close, then waited for those locks
// for ever: `envsched run` on a database truncated while it ran stopped answering, never
// exited and ignored SIGTERM (it was closing the database). So the first damage met is kept,
// every later transaction is refused with it, and Close does not wait on the locks (see
// closeBroken).
func (db *DB) guard(fn func() error) error {
	if d := db.broken.Load(); d != nil {
		return d
	}
	if d := db.cutShort(); d != nil {
		db.broken.CompareAndSwap(nil, d)
		return db.broken.Load()
	}
	err := guard(db.name, fn)
	if d := (*DamagedError)(nil); errors.As(err, &d) {
		db.broken.CompareAndSwap(nil, d)
	}
	return err
}

// cutShort returns the damage of a file shorter than its two meta pages, nil otherwise (or when
// the open file cannot be looked at). A transaction's begin reads the meta pages with bbolt's
// meta lock held and releases it without a defer: begun on such a file, it faulted with the
// lock kept, and every transaction open at that moment (a snapshot being copied, the id table's
// build) then waited for the lock in its rollback for ever, and the daemon's exit with it
// (review14). So the length is looked at (one stat of the path) before every transaction begins. A cut
// further on is met inside a transaction already begun, whose rollback takes no lock a fault
// left held.
//
// The open file is looked at, not the path: a file put in its place (by rename, or removed and
// made again) is no cut of this one, and was reported as one ("the file has 0 bytes ... cut
// short") where the daemon's heartbeat says the database was removed or replaced.
func (db *DB) cutShort() *DamagedError {
	fi, err := db.openStat()
	if err != nil || fi.Size() >= db.metaBytes {
		return nil
	}
	return &DamagedError{Path: db.name, Cause: fmt.Sprintf("the file has %d bytes, fewer than its two meta pages "+
		"(%d): it was cut short while envsched had it open", fi.Size(), db.metaBytes)}
}

// openStat stats the open file (the path when the file could not be kept open).
func (db *DB) openStat() (os.FileInfo, error) {
	if f := db.txs.file; f != nil {
		return f.Stat()
	}
	return os.Stat(db.path)
}

// brokenCloseWait is how long Close waits for bbolt's Close of a database that met damage
// (see DB.guard) before it gives up on it.
const brokenCloseWait = 2 * time.Second

// closeBroken closes bbolt's database after damage was met, waiting at most brokenCloseWait:
// bbolt's Close takes the locks a faulted transaction may have left held. When it does not
// return, the file and its lock stay open until the process exits (the commands exit once
// Close returns), and the error says so.
func (db *DB) closeBroken(d *DamagedError) error {
	done := make(chan error, 1)
	go func() { done <- db.bolt.Close() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("close db %s: %w", db.path, err)
		}
		return nil
	case <-time.After(brokenCloseWait):
		return fmt.Errorf("close db %s: a transaction that met the damage left the file locked; it is "+
			"released when this process exits (%w)", db.path, d)
	}
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

// CheckSize fails with a *DamagedError when size, the length of the database's file as found at
// its path now, is shorter than the pages the database uses: the file was cut short (truncated,
// or a shorter file copied over it in place) while this process had it open. The daemon calls
// it with each heartbeat, so that it stops saying so instead of faulting in whichever
// transaction next reads a page past the end (PROTOCOL.md, "Changes").
func (db *DB) CheckSize(size int64) error {
	return db.view(func(tx *bolt.Tx) error {
		if need := tx.Size(); size < need {
			return &DamagedError{Path: db.name, Cause: fmt.Sprintf("the file has %d bytes, its pages need %d: "+
				"it was cut short while envsched had it open", size, need)}
		}
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
