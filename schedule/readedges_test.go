package schedule

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// readEdgesOneByOne is readEdges as it was before its lookups were done a chunk at a time: the
// reference the chunked one must give exactly.
func readEdgesOneByOne(r *storage.Reader, names []storage.TaskKey) ([]int32, []graph.Edge, error) {
	index := newNameIndex(names)
	var from []int32
	var edges []graph.Edge
	sorted := true
	err := r.EdgeViews(func(node storage.TaskKey, list []storage.Edge) error {
		i, ok := index.find(node.Env, node.Task)
		if !ok {
			return nil
		}
		if n := len(from); n > 0 && from[n-1] > int32(i) {
			sorted = false
		}
		for _, e := range list {
			if j, ok := index.find(e.Env, e.Task); ok && j != i {
				from = append(from, int32(i))
				edges = append(edges, graph.Edge{To: int32(j), Weight: e.Weight, Sim: e.Sim, Cross: e.Cross})
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if !sorted {
		sortByNode(from, edges)
	}
	return edgeOffsets(from, len(names)), edges, nil
}

// readEdges gives what looking every name up one by one gives, over lists that span several
// chunks: edges to tasks not named (stored or not), to the node itself, lists of nodes not
// named, empty and long lists, names in another order than the stored keys'.
func TestReadEdgesIsOneByOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	db := storagetest.Open(t)
	var tasks []record.Task
	for i := range 3000 {
		tasks = append(tasks, record.Task{Env: fmt.Sprint("env-", i%3), Task: fmt.Sprintf("t%04d", i), Text: "x"})
	}
	total := 0
	b := &storage.Batch{Tasks: tasks, Adjacency: func(*storage.Reader, []record.Task, []record.Task) ([]storage.NodeEdges, error) {
		var lists []storage.NodeEdges
		for i, tk := range tasks {
			var es []storage.Edge
			for range rng.IntN(1 + 2*rng.IntN(60)) {
				var e storage.Edge
				switch k := rng.IntN(40); {
				case k == 0:
					e = storage.Edge{Env: tk.Env, Task: tk.Task} // itself
				case k == 1:
					e = storage.Edge{Env: "env-9", Task: "gone"} // never stored
				default:
					o := tasks[rng.IntN(len(tasks))]
					e = storage.Edge{Env: o.Env, Task: o.Task, Cross: o.Env != tk.Env}
				}
				e.Weight, e.Sim = rng.Float32(), rng.Float32()
				es = append(es, e)
			}
			if len(es) > 0 || i%7 == 0 {
				lists = append(lists, storage.NodeEdges{Node: storage.TaskKey{Env: tk.Env, Task: tk.Task}, Edges: es})
				total += len(es)
			}
		}
		return lists, nil
	}}
	if _, err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	if total < 2*edgeChunkSize {
		t.Fatalf("%d edges stored: fewer than two chunks", total)
	}
	var all []storage.TaskKey
	if err := db.View(func(r *storage.Reader) error {
		return r.Tasks(false, func(ti storage.TaskInfo) error {
			all = append(all, storage.TaskKey{Env: ti.Env, Task: ti.Task.Task})
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	some := []storage.TaskKey{}
	for i, k := range all {
		if i%5 != 2 { // a fifth of the tasks not named: their lists, and edges to them, are left out
			some = append(some, k)
		}
	}
	shuffled := append([]storage.TaskKey(nil), some...)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, names := range [][]storage.TaskKey{all, some, shuffled} {
		err := db.View(func(r *storage.Reader) error {
			wantOff, wantEdges, err := readEdgesOneByOne(r, names)
			if err != nil {
				return err
			}
			off, edges, err := readEdges(r, names)
			if err != nil {
				return err
			}
			if len(wantEdges) < edgeChunkSize {
				return fmt.Errorf("only %d edges read", len(wantEdges))
			}
			if !reflect.DeepEqual(off, wantOff) || !reflect.DeepEqual(edges, wantEdges) {
				return fmt.Errorf("%d names: %d edges read, %d one by one, or other ones", len(names), len(edges), len(wantEdges))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
