package storage_test

import (
	"path/filepath"
	"reflect"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
)

// TestHeldFilesHoldOnlyTheirTasks: Batch.Held holds back the tasks the held files listed when
// last read well (their stored Lists), and no other: a catalogue file that could not be read
// held back every retirement, of every dataset. A file held when the lists begin (what it listed
// only an older build knew) holds everything back until it is read well; a file never read well
// holds nothing; the lists of files no longer there are dropped.
func TestHeldFilesHoldOnlyTheirTasks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "envsched.db")
	db := openAt(t, path, storage.Options{})
	defer func() { db.Close() }()
	k := func(task string) storage.TaskKey { return storage.TaskKey{Env: "e", Task: task} }
	keys := func(tasks ...string) *storage.FileList {
		out := &storage.FileList{}
		for _, task := range tasks {
			out.Add(k(task))
		}
		return out
	}
	set := func(tasks ...string) map[storage.TaskKey]bool {
		out := map[storage.TaskKey]bool{}
		for _, task := range tasks {
			out[k(task)] = true
		}
		return out
	}
	list := func(what string, listed map[storage.TaskKey]bool, lists map[uint64]*storage.FileList, held []uint64, want ...string) {
		t.Helper()
		commit(t, db, &storage.Batch{Listed: listed, Lists: lists, Held: held})
		var r map[storage.TaskKey]bool
		if err := db.View(func(rd *storage.Reader) error {
			var err error
			r, err = rd.Retired()
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if w := set(want...); !reflect.DeepEqual(r, w) && (len(r) != 0 || len(w) != 0) {
			t.Fatalf("%s: retired %v; want %v", what, r, w)
		}
	}
	var rows []record.Task
	for _, task := range []string{"old", "a1", "b1", "b2"} {
		rows = append(rows, record.Task{Env: "e", Task: task})
	}
	commit(t, db, &storage.Batch{Tasks: rows})
	// As an older build made it: no lists.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	bdb, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := bdb.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("file_lists")) }); err != nil {
		t.Fatal(err)
	}
	if err := bdb.Close(); err != nil {
		t.Fatal(err)
	}
	db = openAt(t, path, storage.Options{})
	list("file 3 held when the lists begin", set("a1"), map[uint64]*storage.FileList{1: keys("a1")}, []uint64{3})
	list("every file read well", set("a1", "b1", "b2"), map[uint64]*storage.FileList{1: keys("a1", "b2"), 2: keys("b1", "b2")}, nil, "old")
	list("file 1 held", set("b1"), map[uint64]*storage.FileList{2: keys("b1")}, []uint64{1}, "old")
	list("file 2 held", set("a1"), map[uint64]*storage.FileList{1: keys("a1")}, []uint64{2}, "old", "b2")
	list("new file 5 held", set("a1"), map[uint64]*storage.FileList{1: keys("a1"), 2: nil}, []uint64{5}, "old", "b2", "b1")
	commit(t, db, &storage.Batch{Tasks: []record.Task{{Env: "e", Task: "c1"}}})
	list("file 3 held again, its unknown list dropped", set("a1"), map[uint64]*storage.FileList{1: keys("a1")}, []uint64{3}, "old", "b2", "b1", "c1")
}
