package storage

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/envsched/envsched/record"
)

// besideDB is a database of a few tasks over two environments, some of them in the task log.
func besideDB(t *testing.T) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "x.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.tasks.limit = 1500 // checkpoints between the commits: tasks both in tasks and in the log
	for i := range 12 {
		var b Batch
		b.Tasks = append(b.Tasks, record.Task{Env: "e1", Task: fmt.Sprintf("c%02d", i), Text: fmt.Sprint("text ", i)})
		for j := range 4 {
			b.Rollouts = append(b.Rollouts, Rollout{Rollout: record.Rollout{Env: fmt.Sprint("e", j%2),
				Task: fmt.Sprintf("t%02d", (i*5+j)%17), Reward: float64(j % 2), Step: int64(i), HasStep: true}})
		}
		if _, err := db.Commit(&b); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

func readAll(r *Reader) ([]TaskInfo, error) {
	var out []TaskInfo
	err := r.Tasks(true, func(ti TaskInfo) error { out = append(out, ti); return nil })
	return out, err
}

// Beside's Reader reads what the Reader it was made from reads: on a transaction of its own
// when it can, and with that Reader itself when a commit came between (its snapshot is then
// another one), in both of which fn runs once.
func TestBesideReadsTheSameSnapshot(t *testing.T) {
	db := besideDB(t)
	var want, got []TaskInfo
	var twin *Reader
	err := db.View(func(r *Reader) (err error) {
		wait := r.Beside(func(r2 *Reader) (err error) {
			twin = r2
			got, err = readAll(r2)
			return err
		})
		if want, err = readAll(r); err != nil {
			return err
		}
		return wait()
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 42 || !reflect.DeepEqual(got, want) {
		t.Fatalf("beside read %d tasks, the reader %d (want 42), or other ones", len(got), len(want))
	}
	if twin == nil || twin.tx == nil || twin.db != db {
		t.Fatal("fn was not run with a Reader of the database")
	}

	// a commit between the View's transaction and Beside's: fn must read the View's snapshot,
	// not the one after the commit (the task t99 it adds)
	err = db.View(func(r *Reader) (err error) {
		if want, err = readAll(r); err != nil {
			return err
		}
		var b Batch
		b.Rollouts = []Rollout{{Rollout: record.Rollout{Env: "e0", Task: "t99", Reward: 1, Step: 20, HasStep: true}}}
		if _, err := db.Commit(&b); err != nil {
			return err
		}
		var same bool
		wait := r.Beside(func(r2 *Reader) (err error) {
			same = r2 == r
			got, err = readAll(r2)
			return err
		})
		if err := wait(); err != nil {
			return err
		}
		if !same {
			return fmt.Errorf("fn was given another snapshot's Reader")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after a commit between, beside read %d tasks, the reader %d", len(got), len(want))
	}
	if n := len(allTasks(t, db)); n != len(want)+1 {
		t.Fatalf("the commit between added no task: %d then %d", len(want), n)
	}
}

// Inside a commit (Batch.Adjacency's Reader), Beside runs fn at once with that Reader.
func TestBesideInsideACommit(t *testing.T) {
	db := besideDB(t)
	var b Batch
	b.Tasks = []record.Task{{Env: "e1", Task: "new", Text: "new text"}}
	var ran, same bool
	b.Adjacency = func(r *Reader, _, _ []record.Task) ([]NodeEdges, error) {
		wait := r.Beside(func(r2 *Reader) error { ran, same = true, r2 == r; return nil })
		if !ran {
			return nil, fmt.Errorf("fn had not run when Beside returned")
		}
		return nil, wait()
	}
	if _, err := db.Commit(&b); err != nil {
		t.Fatal(err)
	}
	if !same {
		t.Fatal("inside a commit fn was given another Reader")
	}
}
