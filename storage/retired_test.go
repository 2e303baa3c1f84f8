package storage_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
)

// TestHeldFilesHoldOnlyTheirTasks: Batch.Held holds back the tasks the held files listed when
// last read (as stored from earlier lists), and no other: a catalogue file that could not be read
// held back every retirement, of every dataset. A task whose files are not known (listed only by
// a build before the files were kept) is held while any file is: it may be one of theirs.
func TestHeldFilesHoldOnlyTheirTasks(t *testing.T) {
	db := openAt(t, filepath.Join(t.TempDir(), "envsched.db"), storage.Options{})
	defer db.Close()
	k := func(task string) storage.TaskKey { return storage.TaskKey{Env: "e", Task: task} }
	retired := func() map[storage.TaskKey]bool {
		var out map[storage.TaskKey]bool
		if err := db.View(func(r *storage.Reader) error {
			var err error
			out, err = r.Retired()
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	rows := []record.Task{{Env: "e", Task: "old"}, {Env: "e", Task: "a1"}, {Env: "e", Task: "b1"}, {Env: "e", Task: "b2"}}
	commit(t, db, &storage.Batch{Tasks: rows}) // "old" never in a list: its files are not known
	commit(t, db, &storage.Batch{Tasks: rows[1:], Listed: map[storage.TaskKey]string{
		k("a1"): storage.ListedBy(1), k("b1"): storage.ListedBy(2), k("b2"): storage.ListedBy(1, 2),
		k("old"): "", // listed, by no file known: nothing recorded
	}})
	// File 1 held: a1 and b2 (listed by 1 and 2) stay, b1 is retired; "old" is held.
	commit(t, db, &storage.Batch{Listed: map[storage.TaskKey]string{}, Held: []uint64{1}})
	if r, want := retired(), map[storage.TaskKey]bool{k("b1"): true}; !reflect.DeepEqual(r, want) {
		t.Fatalf("file 1 held: retired %v; want %v", r, want)
	}
	// File 3 held (it listed nothing known): all the others go.
	commit(t, db, &storage.Batch{Listed: map[storage.TaskKey]string{}, Held: []uint64{3}})
	if r, want := retired(), map[storage.TaskKey]bool{k("b1"): true, k("a1"): true, k("b2"): true}; !reflect.DeepEqual(r, want) {
		t.Fatalf("file 3 held: retired %v; want %v", r, want)
	}
	commit(t, db, &storage.Batch{Listed: map[storage.TaskKey]string{k("a1"): storage.ListedBy(1)}})
	if r, want := retired(), map[storage.TaskKey]bool{k("b1"): true, k("b2"): true, k("old"): true}; !reflect.DeepEqual(r, want) {
		t.Fatalf("nothing held: retired %v; want %v", r, want)
	}
}
