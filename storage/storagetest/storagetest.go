// Package storagetest holds helpers for tests of packages that use storage.
package storagetest

import (
	"path/filepath"
	"testing"

	"github.com/envsched/envsched/storage"
)

// MustCheck fails t unless db passes storage's full check: bbolt's consistency check and the
// project's invariants (statistics equal a recomputation from the stored rollouts, counters
// equal counts, file offsets not past file sizes when dir, the exchange directory, is given).
// End every test that writes a database with it.
func MustCheck(t testing.TB, db *storage.DB, dir string) {
	t.Helper()
	if err := db.Check(dir); err != nil {
		t.Fatalf("database check failed: %v", err)
	}
}

// Open opens a new database in a fresh temporary folder with default options and closes it
// when the test ends, after a MustCheck.
func Open(t testing.TB) *storage.DB {
	t.Helper()
	db, err := storage.Open(filepath.Join(t.TempDir(), "envsched.db"), storage.Options{})
	if err != nil {
		t.Fatalf("open db: %v", err)
	}
	t.Cleanup(func() {
		MustCheck(t, db, "")
		if err := db.Close(); err != nil {
			t.Errorf("close db: %v", err)
		}
	})
	return db
}
