package schedule_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/graph/graphtest"
	"github.com/envsched/envsched/ingest"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/schedule"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// storedEdges returns the stored adjacency as node → neighbour → cross.
func storedEdges(t *testing.T, db *storage.DB) map[storage.TaskKey]map[storage.TaskKey]bool {
	t.Helper()
	out := map[storage.TaskKey]map[storage.TaskKey]bool{}
	err := db.View(func(r *storage.Reader) error {
		return r.Edges(func(ne storage.NodeEdges) error {
			m := map[storage.TaskKey]bool{}
			for _, e := range ne.Edges {
				m[storage.TaskKey{Env: e.Env, Task: e.Task}] = e.Cross
			}
			out[ne.Node] = m
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func ingestWithEdges(t *testing.T, db *storage.DB, dir string) {
	t.Helper()
	ingestWith(t, db, dir, schedule.NewEdgeKeeper(graph.Options{}))
}

// ingestWith scans dir once with k as the ingester's OnTasks, as a fresh process would, and
// returns how many commits the scan made.
func ingestWith(t *testing.T, db *storage.DB, dir string, k *schedule.EdgeKeeper) int {
	t.Helper()
	in, err := ingest.New(db, dir, oneCommit(ingest.Options{OnTasks: k.OnTasks, OnCommitError: k.Reset}))
	if err != nil {
		t.Fatal(err)
	}
	s, err := in.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s.Commits
}

// oneCommit returns o with a MaxDelay no scan here reaches, so that a scan of a test directory
// (far below the default MaxRecords and MaxBytes) commits everything it reads at once however
// slow the machine is. With the default MaxDelay a slow scan also commits when 100 ms have
// passed since the first line of its batch (checked every 64 records), and the stored edges
// depend on how the tasks are split among commits: the keeper adds each commit's tasks
// incrementally, weighed with the IDF of its last full build (README, "Incremental adding and
// restarts"). A test that compares stored lists with a reference builder's must know the
// commits, not leave them to the clock; the callers check the count.
func oneCommit(o ingest.Options) ingest.Options {
	o.MaxDelay = time.Hour
	return o
}

func TestEdgesStoredWithTheTasksThatMakeThem(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "catalog")
	if err := os.MkdirAll(cat, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(cat, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.jsonl", `{"env":"shop","task_id":"1","text":"cancel the pending order and refund the gift card","tools":["cancel_order"]}
{"env":"shop","task_id":"2","text":"cancel the pending order and refund the gift card please","tools":["cancel_order"]}
{"env":"shop","task_id":"3","text":"book a flight to paris in economy class","tools":["book_flight"]}
`)
	db := storagetest.Open(t)
	ingestWithEdges(t, db, dir)
	a1, a2 := storage.TaskKey{Env: "shop", Task: "1"}, storage.TaskKey{Env: "shop", Task: "2"}
	got := storedEdges(t, db)
	if _, ok := got[a1][a2]; !ok {
		t.Fatalf("near-duplicates shop/1 and shop/2 not linked in the stored edges: %v", got)
	}
	if _, ok := got[a2][a1]; !ok {
		t.Fatalf("stored edges not symmetric: %v", got)
	}

	// A later catalogue file: its task is linked to the earlier ones in the commit that adds it,
	// by a keeper that was rebuilt from the database (as after a restart).
	write("b.jsonl", `{"env":"store","task_id":"9","text":"cancel the pending order and refund the gift card now","tools":["cancel_order"]}
`)
	ingestWithEdges(t, db, dir)
	got = storedEdges(t, db)
	b9 := storage.TaskKey{Env: "store", Task: "9"}
	if cross, ok := got[b9][a1]; !ok || !cross {
		t.Fatalf("new task store/9 not linked across environments to shop/1: %v", got[b9])
	}
	if cross, ok := got[a1][b9]; !ok || !cross {
		t.Fatalf("shop/1's stored list not updated with store/9: %v", got[a1])
	}
}

// storedLists returns every stored adjacency list, by node.
func storedLists(t *testing.T, db *storage.DB) map[storage.TaskKey][]storage.Edge {
	t.Helper()
	out := map[storage.TaskKey][]storage.Edge{}
	err := db.View(func(r *storage.Reader) error {
		return r.Edges(func(ne storage.NodeEdges) error {
			out[ne.Node] = ne.Edges
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// builderLists returns b's non-empty adjacency lists of tasks, by node, as storage stores them.
func builderLists(b *graph.Builder, tasks []record.Task) map[storage.TaskKey][]storage.Edge {
	out := map[storage.TaskKey][]storage.Edge{}
	for _, tk := range tasks {
		named := b.Adjacency(graph.NodeKey{Env: tk.Env, Task: tk.Task})
		if len(named) == 0 {
			continue
		}
		edges := make([]storage.Edge, len(named))
		for i, e := range named {
			edges[i] = storage.Edge{Env: e.Env, Task: e.Task, Weight: e.Weight, Sim: e.Sim, Cross: e.Cross}
		}
		out[storage.TaskKey{Env: tk.Env, Task: tk.Task}] = edges
	}
	return out
}

// sameLists fails t unless the stored lists are exactly want.
func sameLists(t *testing.T, got, want map[storage.TaskKey][]storage.Edge) {
	t.Helper()
	if len(want) == 0 {
		t.Fatal("the reference graph has no edges: the test would prove nothing")
	}
	for k, w := range want {
		if !reflect.DeepEqual(got[k], w) {
			t.Fatalf("stored list of %v:\n%+v\nwant\n%+v", k, got[k], w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Fatalf("stored list of %v, which the reference graph does not have: %+v", k, got[k])
		}
	}
}

func commitTasks(t *testing.T, db *storage.DB, tasks []record.Task, k *schedule.EdgeKeeper) {
	t.Helper()
	b := &storage.Batch{Tasks: tasks}
	if k != nil {
		b.Adjacency = k.OnTasks
	}
	if _, err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
}

// After a restart, the keeper builds its graph in the first commit that adds tasks; the lists
// stored then are those of a builder that saw the same tasks (the old tasks, then the new ones).
func TestLazyFirstCommitStoresTheWholeGraphsLists(t *testing.T) {
	tasks := graphtest.Catalog(1200, 4, 5)
	cases := []struct {
		name  string
		split int
		ref   func() *graph.Builder
	}{
		{"new tasks trigger a full build: equal to one build of all", 800, func() *graph.Builder {
			b := graph.NewBuilder(graph.Options{})
			b.Add(tasks)
			return b
		}},
		{"few new tasks: equal to old tasks then new ones", 1160, func() *graph.Builder {
			b := graph.NewBuilder(graph.Options{})
			b.Add(tasks[:1160])
			b.Add(tasks[1160:])
			return b
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := storagetest.Open(t)
			commitTasks(t, db, tasks[:tc.split], schedule.NewEdgeKeeper(graph.Options{}))
			k := schedule.NewEdgeKeeper(graph.Options{}) // a restart
			if k.Built() {
				t.Fatal("a new keeper is built before any commit")
			}
			commitTasks(t, db, tasks[tc.split:], k)
			if !k.Built() {
				t.Fatal("keeper not built by a commit that added tasks")
			}
			sameLists(t, storedLists(t, db), builderLists(tc.ref(), tasks))
		})
	}
}

// A process that finds nothing new (no file changed, or only rollouts of known tasks) builds
// no graph and stores no edges.
func TestReopenWithNothingNewBuildsNothing(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "catalog", "a.jsonl"), catalogLines(graphtest.Catalog(200, 3, 7)))
	path := filepath.Join(t.TempDir(), "envsched.db")
	db := openDB(t, path)
	ingestWithEdges(t, db, dir)
	want := storedLists(t, db)
	if len(want) == 0 {
		t.Fatal("first ingest stored no edges")
	}
	closeDB(t, db)

	db = openDB(t, path)
	defer closeDB(t, db)
	k := schedule.NewEdgeKeeper(graph.Options{})
	ingestWith(t, db, dir, k)
	if k.Built() {
		t.Fatal("a scan with nothing new built the graph")
	}
	writeFile(t, filepath.Join(dir, "rollouts", "r.jsonl"),
		`{"env":"env-000","task":"t0000000","reward":1,"rollout_id":"r1"}`+"\n")
	ingestWith(t, db, dir, k)
	if k.Built() {
		t.Fatal("a scan with rollouts of known tasks only built the graph")
	}
	if c, err := db.Counters(); err != nil || c.Rollouts != 1 {
		t.Fatalf("rollout not ingested: %+v %v", c, err)
	}
	if got := storedLists(t, db); !reflect.DeepEqual(got, want) {
		t.Fatal("stored edges changed by scans that added no task")
	}
}

// A database with tasks but no stored edges (from before edges were kept) gets every list at
// the first commit that adds tasks, and not before.
func TestMigrationAtFirstCommitThatAddsTasks(t *testing.T) {
	tasks := graphtest.Catalog(400, 4, 9)
	db := storagetest.Open(t)
	commitTasks(t, db, tasks[:390], nil)
	k := schedule.NewEdgeKeeper(graph.Options{})
	commitTasks(t, db, tasks[:5], k) // known tasks only: nothing added
	if k.Built() || len(storedLists(t, db)) != 0 {
		t.Fatal("a commit that added no task built the graph or stored edges")
	}
	commitTasks(t, db, tasks[390:], k)
	ref := graph.NewBuilder(graph.Options{})
	ref.Add(tasks[:390])
	changed := ref.Add(tasks[390:])
	want := builderLists(ref, tasks)
	if len(changed) >= len(want) {
		t.Fatalf("the new tasks change %d of %d lists: the test would not tell migration from an update", len(changed), len(want))
	}
	sameLists(t, storedLists(t, db), want)
}

func openDB(t *testing.T, path string) *storage.DB {
	t.Helper()
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func closeDB(t *testing.T, db *storage.DB) {
	t.Helper()
	storagetest.MustCheck(t, db, "")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// catalogLines renders tasks as catalogue JSON lines.
func catalogLines(tasks []record.Task) string {
	var sb strings.Builder
	for _, tk := range tasks {
		line, err := json.Marshal(map[string]any{"env": tk.Env, "task_id": tk.Task, "text": tk.Text, "tools": tk.Tools, "tags": tk.Tags})
		if err != nil {
			panic(err)
		}
		sb.Write(line)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// A task first seen in rollouts and described later by the catalogue is linked by the commit
// that describes it, whether the keeper already holds the bare task or is built in that commit
// (after a restart).
func TestLaterDescriptionIsLinked(t *testing.T) {
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprint("restart=", restart), func(t *testing.T) {
			tasks := graphtest.Catalog(300, 3, 13)
			x := tasks[len(tasks)-1]
			db := storagetest.Open(t)
			k := schedule.NewEdgeKeeper(graph.Options{})
			r := storage.Rollout{Rollout: record.Rollout{Env: x.Env, Task: x.Task, Reward: 1, RolloutID: "r1"}}
			if _, err := db.Commit(&storage.Batch{Tasks: tasks[:len(tasks)-1], Rollouts: []storage.Rollout{r},
				Adjacency: k.OnTasks}); err != nil {
				t.Fatal(err)
			}
			if restart {
				k = schedule.NewEdgeKeeper(graph.Options{})
			}
			commitTasks(t, db, []record.Task{x}, k)
			ref := graph.NewBuilder(graph.Options{})
			ref.Add(append(slices.Clone(tasks[:len(tasks)-1]), record.Task{Env: x.Env, Task: x.Task}))
			ref.Add([]record.Task{x})
			xk := storage.TaskKey{Env: x.Env, Task: x.Task}
			want := builderLists(ref, tasks)
			if len(want[xk]) == 0 {
				t.Fatal("x has no edges in the reference graph: the test would prove nothing")
			}
			sameLists(t, storedLists(t, db), want)
		})
	}
}

// A keeper built in the commit that rewrites a task's description never saw the old one: the
// lists of the nodes the stored edges linked to it are stored again, without stale links.
func TestRewordedTaskLeavesNoStaleLinks(t *testing.T) {
	tasks := graphtest.Catalog(300, 3, 17)
	db := storagetest.Open(t)
	commitTasks(t, db, tasks, schedule.NewEdgeKeeper(graph.Options{}))
	before := storedLists(t, db)
	var y record.Task
	for _, tk := range tasks {
		if len(before[storage.TaskKey{Env: tk.Env, Task: tk.Task}]) > 0 {
			y = tk
			break
		}
	}
	yk := storage.TaskKey{Env: y.Env, Task: y.Task}
	reworded := record.Task{Env: y.Env, Task: y.Task, Text: "zq1 zq2 zq3 zq4 zq5 zq6"}   // like no other task
	commitTasks(t, db, []record.Task{reworded}, schedule.NewEdgeKeeper(graph.Options{})) // a restart
	got := storedLists(t, db)
	for node, edges := range got {
		for _, e := range edges {
			if (storage.TaskKey{Env: e.Env, Task: e.Task}) == yk {
				t.Fatalf("%v still linked to %v after its description changed to one like no other", node, yk)
			}
		}
	}
	if len(got[yk]) != 0 {
		t.Fatalf("reworded %v keeps its old list %+v", yk, got[yk])
	}
}

// A commit that fails after the keeper added its tasks leaves the keeper wrong; after Reset,
// the retry stores the lists a builder of the committed tasks has.
func TestAbortedCommitLeavesKeeperRight(t *testing.T) {
	tasks := graphtest.Catalog(300, 3, 11)
	db := storagetest.Open(t)
	commitTasks(t, db, tasks[:290], schedule.NewEdgeKeeper(graph.Options{}))
	k := schedule.NewEdgeKeeper(graph.Options{})
	errLater := errors.New("a later step of the commit fails")
	failing := &storage.Batch{Tasks: tasks[290:], Adjacency: func(r *storage.Reader, a, c []record.Task) ([]storage.NodeEdges, error) {
		if _, err := k.OnTasks(r, a, c); err != nil {
			return nil, err
		}
		return nil, errLater
	}}
	if _, err := db.Commit(failing); !errors.Is(err, errLater) {
		t.Fatalf("commit: %v, want %v", err, errLater)
	}
	k.Reset()
	if k.Built() {
		t.Fatal("keeper built after Reset")
	}
	commitTasks(t, db, tasks[290:], k)
	ref := graph.NewBuilder(graph.Options{})
	ref.Add(tasks[:290])
	ref.Add(tasks[290:])
	sameLists(t, storedLists(t, db), builderLists(ref, tasks))
}

// Through ingest: a scan whose commit fails after the keeper ran resets it (OnCommitError),
// and the next scan stores the new tasks' lists.
func TestIngestResetsKeeperOnFailedCommit(t *testing.T) {
	tasks := graphtest.Catalog(300, 3, 19)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "catalog", "a.jsonl"), catalogLines(tasks[:290]))
	db := storagetest.Open(t)
	if n := ingestWith(t, db, dir, schedule.NewEdgeKeeper(graph.Options{})); n != 1 {
		t.Fatalf("first scan made %d commits, want 1: the reference builder adds its tasks at once", n)
	}
	writeFile(t, filepath.Join(dir, "catalog", "b.jsonl"), catalogLines(tasks[290:]))

	k := schedule.NewEdgeKeeper(graph.Options{})
	errLater := errors.New("a later step of the commit fails")
	fail := true
	onTasks := func(r *storage.Reader, a, c []record.Task) ([]storage.NodeEdges, error) {
		lists, err := k.OnTasks(r, a, c)
		if err == nil && fail {
			fail, err = false, errLater
		}
		return lists, err
	}
	in, err := ingest.New(db, dir, oneCommit(ingest.Options{OnTasks: onTasks, OnCommitError: k.Reset}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Scan(context.Background()); !errors.Is(err, errLater) {
		t.Fatalf("first scan: %v, want %v", err, errLater)
	}
	if s, err := in.Scan(context.Background()); err != nil || s.Commits != 1 {
		t.Fatalf("retry: %d commits, %v; want 1 commit", s.Commits, err)
	}
	ref := graph.NewBuilder(graph.Options{})
	ref.Add(catalogTasks(tasks[:290]))
	ref.Add(catalogTasks(tasks[290:]))
	sameLists(t, storedLists(t, db), builderLists(ref, tasks))
}

// catalogTasks returns tasks as ingest stores them from catalogLines (no embeddings, and
// empty lists as none).
func catalogTasks(tasks []record.Task) []record.Task {
	out := make([]record.Task, len(tasks))
	for i, tk := range tasks {
		out[i] = record.Task{Env: tk.Env, Task: tk.Task, Text: tk.Text, Tools: tk.Tools, Tags: tk.Tags}
	}
	return out
}
