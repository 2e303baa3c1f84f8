package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestOverwrittenDuringACommitIsNotWrittenInto (hostile15): a file overwritten in place after a
// write transaction began, while it is being filled (an ingest commit takes up to 100 ms), got
// that transaction's pages, chosen from the free list of the database it no longer holds. The
// meta page is read from the file again just before the commit writes: the commit is refused,
// and the file stays as it was copied.
func TestOverwrittenDuringACommitIsNotWrittenInto(t *testing.T) {
	dir := t.TempDir()
	// a newer transaction than the database's below
	copied := anotherDatabase(t, dir, 5, func(int) ([]byte, []byte) { return []byte("x"), []byte("y") })
	path := filepath.Join(dir, "envsched.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketCounters).Put([]byte("mine"), bytes.Repeat([]byte("z"), 20000)); err != nil {
			return err
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteAt(copied, 0)
		return err
	})
	var d *DamagedError
	if !errors.As(err, &d) || !d.Overwritten {
		t.Fatalf("commit into a file overwritten while it was filled: %v; want a DamagedError saying so", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(after[:len(copied)], copied) {
		t.Errorf("the commit wrote into the file copied over the database")
	}
}

// TestTornFirstMetaOfALargePageFileIsNoOverwrite: the check before a commit reads the meta
// pages from the file; with the first meta page torn (a crash while bbolt wrote it: bbolt then
// uses the second) it looked for the second at the system's page size, not the file's, found
// nothing valid there in a file of 16 KiB pages, and refused every commit as an overwrite.
func TestTornFirstMetaOfALargePageFileIsNoOverwrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "envsched.db")
	b, err := bolt.Open(path, 0o600, &bolt.Options{PageSize: 16384})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, 8), 16+56); err != nil { // meta page 0's checksum
		t.Fatal(err)
	}
	f.Close()
	db, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 3 {
		err := db.update(func(tx *bolt.Tx) error { return tx.Bucket(bucketCounters).Put([]byte("x"), []byte{byte(i)}) })
		if err != nil {
			t.Fatalf("commit %d on a file whose first meta page was torn: %v", i, err)
		}
	}
}

// TestOverwrittenWhileACommitIsWrittenStops (hostile16): bytes of another database copied over
// the file after a commit's last check (stillSame) and before bbolt wrote that commit's pages
// and meta page got them: the file's newest transaction was then this process's own commit,
// over the copy's tree. The commit returned nil; the next transaction found the copy only by
// its instance id (when its commit had not rewritten the meta bucket), saying to start again
// to serve the restored file, and a restart served the mix without a word. The copy cannot be
// kept whole, but the commit now reports the overwrite (a DamagedError, Overwritten and
// InFlight, saying to restore again) and every later transaction is refused with it.
func TestOverwrittenWhileACommitIsWrittenStops(t *testing.T) {
	dir := t.TempDir()
	// an older transaction than the database's below: its meta pages lose
	copied := anotherDatabase(t, dir, 3, func(i int) ([]byte, []byte) {
		return []byte{byte(i)}, bytes.Repeat([]byte("o"), 30000)
	})
	path := filepath.Join(dir, "envsched.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 6 {
		if err := db.update(func(tx *bolt.Tx) error {
			return tx.Bucket(bucketCounters).Put([]byte{'m', byte(i)}, bytes.Repeat([]byte("m"), 100))
		}); err != nil {
			t.Fatal(err)
		}
	}
	db.txs.afterCheck = func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		if _, err := f.WriteAt(copied, 0); err != nil {
			t.Error(err)
		}
	}
	err = db.update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketCounters).Put([]byte("mine"), []byte("z"))
	})
	db.txs.afterCheck = nil
	var d *DamagedError
	if !errors.As(err, &d) || !d.Overwritten || !d.InFlight {
		t.Fatalf("commit written over a copy that landed after its check: %v; want a DamagedError saying so", err)
	}
	if !strings.Contains(err.Error(), "restore it again") {
		t.Errorf("the message does not say the copy must be restored again: %v", err)
	}
	err = db.View(func(r *Reader) error { _, err := r.Counters(); return err })
	if !errors.As(err, &d) || !d.Overwritten {
		t.Errorf("a read after it: %v; want the same DamagedError", err)
	}
}

// anotherDatabase makes a second database, dir/other.db, with n commits, the i-th putting kv(i)
// into the counters bucket, and returns its bytes: what a copy over the database's file writes.
func anotherDatabase(t *testing.T, dir string, n int, kv func(i int) ([]byte, []byte)) []byte {
	t.Helper()
	path := filepath.Join(dir, "other.db")
	other, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		k, v := kv(i)
		if err := other.update(func(tx *bolt.Tx) error { return tx.Bucket(bucketCounters).Put(k, v) }); err != nil {
			t.Fatal(err)
		}
	}
	other.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
