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
		Adjacency: func(r *storage.Reader, added, _ []record.Task) ([]storage.NodeEdges, error) {
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

// The hook gets the tasks a batch adds and the known tasks whose description it changes (a
// task first seen in rollouts that the catalogue describes later, or a new text), each with
// the batch's last row for it; a batch that does neither does not call it.
func TestAdjacencyGetsAddedAndChanged(t *testing.T) {
	type call struct{ added, changed []string }
	cases := []struct {
		name string
		b    storage.Batch
		want *call // nil: the hook is not called
	}{
		{"a known task described later", storage.Batch{Tasks: []record.Task{{Env: "e", Task: "bare", Text: "described now"}}},
			&call{changed: []string{"e/bare: described now"}}},
		{"a new text", storage.Batch{Tasks: []record.Task{{Env: "e", Task: "a", Text: "a, reworded"}}},
			&call{changed: []string{"e/a: a, reworded"}}},
		{"new tools", storage.Batch{Tasks: []record.Task{{Env: "e", Task: "a", Text: "a", Tools: []string{"x"}}}},
			&call{changed: []string{"e/a: a"}}},
		{"an embedding", storage.Batch{Tasks: []record.Task{{Env: "e", Task: "a", Text: "a", Embedding: []float32{1}}}},
			&call{changed: []string{"e/a: a"}}},
		{"the same description again, and rollouts of known tasks", storage.Batch{
			Tasks:    []record.Task{{Env: "e", Task: "a", Text: "a"}, {Env: "e", Task: "bare"}},
			Rollouts: []storage.Rollout{rollout("e", "a", 1, 1, "", "r1"), rollout("e", "bare", 1, 1, "", "r2")},
		}, nil},
		{"two rows of one batch: the last wins", storage.Batch{Tasks: []record.Task{
			{Env: "e", Task: "a", Text: "first"}, {Env: "e", Task: "n", Text: "first"},
			{Env: "e", Task: "a", Text: "second"}, {Env: "e", Task: "n", Text: "second"},
		}}, &call{added: []string{"e/n: second"}, changed: []string{"e/a: second"}}},
		{"added and changed together", storage.Batch{
			Tasks:    []record.Task{{Env: "e", Task: "bare", Text: "b"}, {Env: "e", Task: "n", Text: "n"}},
			Rollouts: []storage.Rollout{rollout("f", "c", 1, 1, "", "r3")},
		}, &call{added: []string{"e/n: n", "f/c: "}, changed: []string{"e/bare: b"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := storagetest.Open(t)
			commit(t, db, &storage.Batch{Tasks: []record.Task{{Env: "e", Task: "a", Text: "a"}},
				Rollouts: []storage.Rollout{rollout("e", "bare", 1, 1, "", "r0")}})
			var got *call
			b := tc.b
			b.Adjacency = func(_ *storage.Reader, added, changed []record.Task) ([]storage.NodeEdges, error) {
				if got != nil {
					t.Fatal("hook called twice in one commit")
				}
				got = &call{added: describeTasks(added), changed: describeTasks(changed)}
				return nil, nil
			}
			commit(t, db, &b)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("hook got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// describeTasks renders tasks as env/task: text, nil for none.
func describeTasks(tasks []record.Task) []string {
	var out []string
	for _, tk := range tasks {
		out = append(out, tk.Env+"/"+tk.Task+": "+tk.Text)
	}
	return out
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
		Adjacency: func(r *storage.Reader, _, _ []record.Task) ([]storage.NodeEdges, error) {
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
