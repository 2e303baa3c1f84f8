package storage_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// Releasing the mapped pages changes nothing a reader or the writer sees: in the middle of a
// read transaction (before, between and after reads, within the scans that release as they
// go) and between commits, every read gives what it gave before, and the file stays
// consistent.
func TestReleasePagesChangesNoRead(t *testing.T) {
	defer storage.SetReleaseEvery(7)()
	db := storagetest.Open(t)
	var tasks []record.Task
	var rs []storage.Rollout
	for i := range 3000 {
		tasks = append(tasks, record.Task{Env: fmt.Sprintf("env-%d", i%4), Task: fmt.Sprint("t", i), Text: fmt.Sprint("text of ", i)})
		rs = append(rs, rollout(fmt.Sprintf("env-%d", i%4), fmt.Sprint("t", i), float64(i%2), int64(i%9), "", fmt.Sprint("r", i)))
	}
	commit(t, db, &storage.Batch{Tasks: tasks, Rollouts: rs})
	read := func(r *storage.Reader) []storage.TaskInfo {
		var out []storage.TaskInfo
		if err := r.Tasks(true, func(ti storage.TaskInfo) error { out = append(out, ti); return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	var before []storage.TaskInfo
	err := db.View(func(r *storage.Reader) error {
		before = read(r)
		r.ReleasePages()
		if again := read(r); !reflect.DeepEqual(again, before) {
			t.Error("a read after ReleasePages differs from the one before")
		}
		r.ReleasePages()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != 3000 {
		t.Fatalf("%d tasks read", len(before))
	}
	commit(t, db, &storage.Batch{Rollouts: []storage.Rollout{rollout("env-0", "t0", 1, 9, "", "r0"), rollout("env-0", "t0", 1, 9, "", "new")}})
	err = db.View(func(r *storage.Reader) error {
		after := read(r)
		if after[0].Stats.Rollouts != before[0].Stats.Rollouts+1 || !reflect.DeepEqual(after[1:], before[1:]) {
			t.Errorf("after a commit: task 0 has %d rollouts (was %d), or another task changed", after[0].Stats.Rollouts, before[0].Stats.Rollouts)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	storagetest.MustCheck(t, db, "")
}
