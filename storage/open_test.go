package storage_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// Opening an existing database writes nothing to it (a write transaction at open would fsync
// the file, flushing all of it that the page cache holds unwritten): the file is byte for byte
// the same after an open and a close, with or without data, and its configuration is read.
func TestOpenOfAnExistingDatabaseWritesNothing(t *testing.T) {
	for _, withData := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "envsched.db")
		db, err := storage.Open(path, storage.Options{Decay: 0.8})
		if err != nil {
			t.Fatal(err)
		}
		if withData {
			commit(t, db, &storage.Batch{Rollouts: []storage.Rollout{rollout("e", "t", 1, 1, "", "r1")}})
		}
		must(t, db.Close())
		before, err := os.ReadFile(path)
		must(t, err)
		db, err = storage.Open(path, storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := db.Config().Decay; got != 0.8 {
			t.Errorf("with data %v: decay %g after reopening; want 0.8", withData, got)
		}
		storagetest.MustCheck(t, db, "")
		must(t, db.Close())
		after, err := os.ReadFile(path)
		must(t, err)
		if !bytes.Equal(before, after) {
			t.Errorf("with data %v: opening and closing the database changed its file", withData)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
