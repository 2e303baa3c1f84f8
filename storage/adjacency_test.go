package storage_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// taskNames lists the tasks r sees, as env/task: text.
func taskNames(t *testing.T, r *storage.Reader) []string {
	t.Helper()
	var out []string
	err := r.Tasks(true, func(ti storage.TaskInfo) error {
		out = append(out, ti.Env+"/"+ti.Task.Task+": "+ti.Text)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func edgeNodes(t *testing.T, r *storage.Reader) []string {
	t.Helper()
	var out []string
	err := r.Edges(func(ne storage.NodeEdges) error {
		out = append(out, ne.Node.Env+"/"+ne.Node.Task)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func viewTasks(t *testing.T, db *storage.DB) []string {
	t.Helper()
	var out []string
	if err := db.View(func(r *storage.Reader) error { out = taskNames(t, r); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// The hook's Reader sees the database as the batch leaves it: earlier tasks, the batch's own
// tasks (new and updated) and the batch's Edges.
func TestAdjacencyReaderSeesTheBatch(t *testing.T) {
	db := storagetest.Open(t)
	commit(t, db, &storage.Batch{Tasks: []record.Task{{Env: "e", Task: "a", Text: "old a"}}})
	var sawTasks, sawEdges []string
	var sawAdded []record.Task
	commit(t, db, &storage.Batch{
		Tasks:    []record.Task{{Env: "e", Task: "a", Text: "new a"}, {Env: "e", Task: "b", Text: "b"}},
		Rollouts: []storage.Rollout{rollout("f", "c", 1, 1, "", "r1")},
		Edges:    []storage.NodeEdges{{Node: storage.TaskKey{Env: "e", Task: "a"}, Edges: []storage.Edge{{Env: "e", Task: "b"}}}},
		Adjacency: func(r *storage.Reader, added []record.Task) ([]storage.NodeEdges, error) {
			sawTasks, sawEdges, sawAdded = taskNames(t, r), edgeNodes(t, r), added
			return nil, nil
		},
	})
	if want := []string{"e/a: new a", "e/b: b", "f/c: "}; !reflect.DeepEqual(sawTasks, want) {
		t.Errorf("hook's Reader saw tasks %q, want %q", sawTasks, want)
	}
	if want := []string{"e/a"}; !reflect.DeepEqual(sawEdges, want) {
		t.Errorf("hook's Reader saw edges of %q, want %q (the batch's Edges)", sawEdges, want)
	}
	if len(sawAdded) != 2 || sawAdded[0].Task != "b" || sawAdded[1].Task != "c" {
		t.Errorf("hook got added %+v, want e/b then f/c", sawAdded)
	}
}

// A batch that adds no task does not call the hook.
func TestAdjacencyNotCalledWithoutNewTasks(t *testing.T) {
	db := storagetest.Open(t)
	commit(t, db, &storage.Batch{Tasks: []record.Task{{Env: "e", Task: "a"}}})
	calls := 0
	commit(t, db, &storage.Batch{
		Tasks:    []record.Task{{Env: "e", Task: "a", Text: "described now"}},
		Rollouts: []storage.Rollout{rollout("e", "a", 1, 1, "", "r1")},
		Adjacency: func(*storage.Reader, []record.Task) ([]storage.NodeEdges, error) {
			calls++
			return nil, nil
		},
	})
	if calls != 0 {
		t.Fatalf("hook called %d times for a batch that adds no task", calls)
	}
}

// An error from the hook aborts the whole commit, and what the hook's Reader read of that
// commit is not seen by later readers (the next commit reuses the aborted one's ID).
func TestAdjacencyErrorAbortsCommit(t *testing.T) {
	db := storagetest.Open(t)
	commit(t, db, &storage.Batch{Tasks: []record.Task{{Env: "e", Task: "a", Text: "a"}}})
	viewTasks(t, db) // readers now share a decoded task log
	boom := errors.New("boom")
	_, err := db.Commit(&storage.Batch{
		Files:    []storage.FileState{{ID: 1, Kind: storage.KindRollouts, Path: "rollouts/x.jsonl", Offset: 10}},
		Tasks:    []record.Task{{Env: "e", Task: "b", Text: "b"}},
		Rollouts: []storage.Rollout{rollout("e", "a", 1, 1, "", "r1")},
		Adjacency: func(r *storage.Reader, _ []record.Task) ([]storage.NodeEdges, error) {
			taskNames(t, r) // reads the task log inside the doomed transaction
			return nil, boom
		},
	})
	if !errors.Is(err, boom) {
		t.Fatalf("commit with a failing hook: %v, want %v", err, boom)
	}
	if got, want := viewTasks(t, db), []string{"e/a: a"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after the aborted commit: tasks %q, want %q", got, want)
	}
	c, err := db.Counters()
	if err != nil {
		t.Fatal(err)
	}
	if c.Rollouts != 0 {
		t.Fatalf("aborted commit stored %d rollouts", c.Rollouts)
	}
	commit(t, db, &storage.Batch{Tasks: []record.Task{{Env: "e", Task: "c", Text: "c"}}})
	if got, want := viewTasks(t, db), []string{"e/a: a", "e/c: c"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after the next commit: tasks %q, want %q", got, want)
	}
}
