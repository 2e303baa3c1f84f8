package storage

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestOverwrittenByADatabaseOfTheSameTransactionStops (review15): README says a
// database overwritten in place with another database as long or longer stops the daemon at
// its next transaction. The watch (txWatch) compares only the newest transaction id, so
// another database that happens to have made as many transactions (two folders' databases
// fed alike, or a copy of the same age) is not noticed: the daemon goes on serving and
// committing into the other file, the damage hostile15 set out to stop. Here two databases
// each make 5 transactions after Open, the second is copied over the first while it is open,
// and a read of the first goes on. Passes when the watch also compares something the other
// file cannot share by chance (e.g. the meta page's checksum or root page id as last
// committed, or a random id stored in the file at creation).
func TestOverwrittenByADatabaseOfTheSameTransactionStops(t *testing.T) {
	dir := t.TempDir()
	put := func(db *DB, v string) {
		for range 5 {
			if err := db.update(func(tx *bolt.Tx) error { return tx.Bucket(bucketCounters).Put([]byte("x"), []byte(v)) }); err != nil {
				t.Fatal(err)
			}
		}
	}
	otherPath := filepath.Join(dir, "other.db")
	other, err := Open(otherPath, Options{})
	if err != nil {
		t.Fatal(err)
	}
	put(other, "theirs, somewhat longer")
	other.Close()
	path := filepath.Join(dir, "envsched.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	put(db, "mine")
	copied, err := os.ReadFile(otherPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); int64(len(copied)) < fi.Size() {
		t.Skipf("the other database (%d bytes) is shorter than this one (%d)", len(copied), fi.Size())
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(copied, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var got string
	err = db.view(func(tx *bolt.Tx) error { got = string(tx.Bucket(bucketCounters).Get([]byte("x"))); return nil })
	var d *DamagedError
	if !errors.As(err, &d) || !d.Overwritten {
		t.Errorf("a read after another database of the same transaction id was copied over this one: err %v, "+
			"read %q from it; want a DamagedError saying it was overwritten", err, got)
	}
}
