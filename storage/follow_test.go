package storage

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/envsched/envsched/record"
)

// followed applies what a Follower hands over to a map of every task's record, as a follower's
// owner does, and returns it with whether the View was a full read.
func followed(t *testing.T, f *Follower, m map[TaskKey]TaskInfo) bool {
	t.Helper()
	var all bool
	err := f.View(func(r *Reader, changed []TaskInfo, a bool) error {
		all = a
		if a {
			clear(m)
			return r.Tasks(false, func(ti TaskInfo) error { m[TaskKey{ti.Env, ti.Task.Task}] = ti; return nil })
		}
		for _, ti := range changed {
			m[TaskKey{ti.Env, ti.Task.Task}] = ti
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return all
}

func allTasks(t *testing.T, db *DB) map[TaskKey]TaskInfo {
	t.Helper()
	m := map[TaskKey]TaskInfo{}
	if err := db.View(func(r *Reader) error {
		return r.Tasks(false, func(ti TaskInfo) error { m[TaskKey{ti.Env, ti.Task.Task}] = ti; return nil })
	}); err != nil {
		t.Fatal(err)
	}
	return m
}

// A Follower's owner that applies the changed records it is handed has every task's record
// as a full read gives it, through commits that checkpoint the task log, answers, and commits
// that fail; a View whose function fails and Close make the next View a full read.
func TestFollowerSeesEveryWrite(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "x.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.tasks.limit = 1500 // a checkpoint every few commits: its records must reach the follower too
	f := db.Follow()
	m := map[TaskKey]TaskInfo{}
	if !followed(t, f, m) {
		t.Fatal("the first View was not a full read")
	}
	bad := errors.New("no")
	for i := range 30 {
		var b Batch
		b.Tasks = append(b.Tasks, record.Task{Env: "e1", Task: fmt.Sprintf("c%02d", i%11)})
		for j := range 5 {
			b.Rollouts = append(b.Rollouts, Rollout{Rollout: record.Rollout{Env: fmt.Sprint("e", j%2),
				Task: fmt.Sprintf("t%02d", (i*7+j)%23), Reward: float64(j % 2), Step: int64(i), HasStep: true}})
		}
		if i%4 == 3 { // fails after its writes: nothing of it may be handed over
			b.Tasks = append(b.Tasks, record.Task{Env: "e1", Task: fmt.Sprint("new", i)}) // calls the hook
			b.Adjacency = func(*Reader, []record.Task, []record.Task) ([]NodeEdges, error) { return nil, bad }
			if _, err := db.Commit(&b); !errors.Is(err, bad) {
				t.Fatalf("commit %d: %v", i, err)
			}
		} else if _, err := db.Commit(&b); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			chosen := []TaskKey{{"e0", fmt.Sprintf("t%02d", i%23)}, {"e1", fmt.Sprintf("c%02d", i%11)}}
			if err := db.StoreAnswer(fmt.Sprint("a", i), int64(i), []byte("{}"), chosen, nil); err != nil && !errors.Is(err, ErrNotFound) {
				t.Fatal(err)
			}
		}
		if i%2 == 0 { // changes also pile up over several commits
			if followed(t, f, m) {
				t.Fatalf("commit %d: a full read without a failure", i)
			}
			if want := allTasks(t, db); !reflect.DeepEqual(m, want) {
				t.Fatalf("after commit %d: the follower's owner has\n%v\nthe database\n%v", i, m, want)
			}
		}
	}
	if err := f.View(func(*Reader, []TaskInfo, bool) error { return bad }); !errors.Is(err, bad) {
		t.Fatalf("a failing View returned %v", err)
	}
	if !followed(t, f, m) {
		t.Error("the View after a failed one was not a full read")
	}
	f.Close()
	if !followed(t, f, m) {
		t.Error("the View after Close was not a full read")
	}
}
