package schedule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

var fixedNow = func() time.Time { return time.Date(2026, 12, 2, 17, 0, 0, 0, time.FixedZone("CET", 3600)) }

// fill commits a catalogue of envs × perEnv tasks and, for the first half of each env's tasks,
// two groups of 8 rollouts at steps 1 and 2 drawn from a per-task success probability.
func fill(t *testing.T, db *storage.DB, envs, perEnv int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var b storage.Batch
	for e := range envs {
		for k := range perEnv {
			b.Tasks = append(b.Tasks, record.Task{Env: fmt.Sprintf("env-%d", e), Task: fmt.Sprintf("task-%03d", k), Text: "solve it"})
		}
	}
	for _, task := range b.Tasks[:len(b.Tasks)/2] {
		p := rng.Float64()
		for step := int64(1); step <= 2; step++ {
			for range 8 {
				r := 0.0
				if rng.Float64() < p {
					r = 1
				}
				b.Rollouts = append(b.Rollouts, storage.Rollout{Rollout: record.Rollout{Env: task.Env, Task: task.Task, Reward: r, Step: step, HasStep: true}})
			}
		}
	}
	if _, err := db.Commit(&b); err != nil {
		t.Fatal(err)
	}
}

func newScheduler(t *testing.T, db *storage.DB, o Options) *Scheduler {
	t.Helper()
	o.Now = fixedNow
	s, err := New(db, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func decode(t *testing.T, data []byte) Answer {
	t.Helper()
	var a Answer
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("answer is not the batch object: %v\n%s", err, data)
	}
	return a
}

func TestAnswerFollowsTheProtocol(t *testing.T) {
	db := storagetest.Open(t)
	fill(t, db, 3, 40)
	s := newScheduler(t, db, Options{})
	data, err := s.Answer("step-000001", []byte(`{"size": 12, "group_size": 4}`))
	if err != nil {
		t.Fatal(err)
	}
	var generic map[string]any
	if err := json.Unmarshal(data, &generic); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "policy", "step", "created_at", "size", "group_size", "rollouts_seen", "envs", "tasks"} {
		if _, ok := generic[k]; !ok {
			t.Errorf("answer lacks %q", k)
		}
	}
	a := decode(t, data)
	if a.ID != "step-000001" || a.Policy != "envsched/1" || a.Step != 1 || a.Size != 12 || a.GroupSize != 4 {
		t.Errorf("header: %+v", a)
	}
	if a.CreatedAt != "2026-12-02T16:00:00Z" {
		t.Errorf("created_at %q, want RFC 3339 in UTC", a.CreatedAt)
	}
	if a.RolloutsSeen != 60*16 {
		t.Errorf("rollouts_seen %d, want %d", a.RolloutsSeen, 60*16)
	}
	counts := map[string]int{}
	for r, task := range a.Tasks {
		counts[task.Env]++
		if task.Rank != r+1 || task.TaskID == "" || task.Reason == "" {
			t.Errorf("task %d: %+v", r, task)
		}
		if task.PredictedVariance < 0 || task.PredictedVariance > 0.25 || task.PDegenerate < 0 || task.PDegenerate > 1 || task.PredictedMean < 0 || task.PredictedMean > 1 {
			t.Errorf("task %d: numbers out of range: %+v", r, task)
		}
		if d := task.Score - (task.Exploit + task.Coverage - task.Penalty); d > 1e-5 || d < -1e-5 {
			t.Errorf("task %d: score %g is not exploit + coverage - penalty", r, task.Score)
		}
	}
	if len(a.Tasks) != 12 || fmt.Sprint(counts) != fmt.Sprint(a.Envs) {
		t.Errorf("%d tasks, envs %v, counted %v", len(a.Tasks), a.Envs, counts)
	}
}

func TestSameIDSameBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "envsched.db")
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, db, 2, 30)
	first, err := newScheduler(t, db, Options{}).Answer("b1", []byte(`{"size": 16}`))
	if err != nil {
		t.Fatal(err)
	}
	// New rollouts and a restart do not change a stored answer, whatever the body says now.
	var b storage.Batch
	b.Rollouts = []storage.Rollout{{Rollout: record.Rollout{Env: "env-0", Task: "task-000", Reward: 1}}}
	if _, err := db.Commit(&b); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	again, err := newScheduler(t, db, Options{}).Answer("b1", []byte(`{"size": 3}`))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, again) {
		t.Errorf("the same ID gave other bytes:\n%s\n%s", first, again)
	}
	storagetest.MustCheck(t, db, "")
}

func TestStepsAndChosenCounts(t *testing.T) {
	db := storagetest.Open(t)
	fill(t, db, 2, 20)
	s := newScheduler(t, db, Options{Size: 5})
	a1 := decode(t, must(s.Answer("a", nil)))
	a2 := decode(t, must(s.Answer("b", []byte(`{"step": 41}`))))
	a3 := decode(t, must(s.Answer("c", []byte(`{}`))))
	if a1.Step != 1 || a2.Step != 41 || a3.Step != 42 {
		t.Errorf("steps %d, %d, %d; want 1, 41 (asked), 42 (previous + 1)", a1.Step, a2.Step, a3.Step)
	}
	if a1.Size != 5 || len(a3.Tasks) != 5 {
		t.Errorf("default size 5: got %d and %d tasks", a1.Size, len(a3.Tasks))
	}
	var chosen int64
	err := db.View(func(r *storage.Reader) error {
		return r.Tasks(false, func(ti storage.TaskInfo) error {
			chosen += ti.Stats.Chosen
			return nil
		})
	})
	if err != nil || chosen != 15 {
		t.Errorf("tasks chosen %d times in all (%v), want 15", chosen, err)
	}
}

func must(data []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return data
}

func TestSameStateSameBatchAcrossSchedulers(t *testing.T) {
	db := storagetest.Open(t)
	fill(t, db, 3, 50)
	// Two fresh schedulers over the same state answer two IDs with the same explicit seed and
	// step: the tasks must be the same.
	x := decode(t, must(newScheduler(t, db, Options{}).Answer("x", []byte(`{"seed": 7, "step": 3}`))))
	// x changed Chosen counts; compare against a second database in the same state instead.
	db2 := storagetest.Open(t)
	fill(t, db2, 3, 50)
	y := decode(t, must(newScheduler(t, db2, Options{}).Answer("y", []byte(`{"seed": 7, "step": 3}`))))
	x.ID, y.ID = "", ""
	if fmt.Sprint(x) != fmt.Sprint(y) {
		t.Errorf("same state and request, different batches:\n%+v\n%+v", x, y)
	}
}

func TestBadRequests(t *testing.T) {
	db := storagetest.Open(t)
	fill(t, db, 2, 10)
	s := newScheduler(t, db, Options{})
	cases := map[string]string{
		`{"sise": 4}`:                          `unknown field "sise" (did you mean "size"?)`,
		`{"size": 0}`:                          "size is 0: want an integer from 1 to 100000",
		`{"size": "8"}`:                        `size is "8"`,
		`{"size": 2.5}`:                        "size is 2.5",
		`{"group_size": 2000}`:                 "group_size is 2000",
		`{"envs": ["nope"]}`:                   `envs names unknown environment "nope"`,
		`{"envs": []}`:                         "envs is empty",
		`{"exclude_envs": "env-0"}`:            "exclude_envs is \"env-0\": want a list",
		`{"size": 21}`:                         "size 21 is larger than the 20 eligible tasks",
		`{"allow_repeats": "yes"}`:             "allow_repeats is \"yes\"",
		`[1, 2]`:                               "not a JSON object",
		`{"size": 4} {"size": 5}`:              "more than one JSON value",
		`{"seed": -3, "step": -1}`:             "step is -1",
		`{"exclude_envs": ["env-0", "env-1"]}`: "no task is eligible",
	}
	for body, want := range cases {
		_, err := s.Answer("bad", []byte(body))
		var re *RequestError
		if !errors.As(err, &re) || !re.BadRequest() || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want a bad request saying %q", body, err, want)
		}
	}
	if _, err := s.Answer("../x", nil); err == nil {
		t.Error("an ID with a slash was accepted")
	}
	// Nothing was stored by the bad requests: a good one under the same ID is answered.
	if _, err := s.Answer("bad", []byte(`{"size": 20}`)); err != nil {
		t.Errorf("after bad requests: %v", err)
	}
	if _, err := s.Answer("more", []byte(`{"size": 50, "allow_repeats": true}`)); err != nil {
		t.Errorf("allow_repeats: %v", err)
	}
}

func TestEmptyCatalogue(t *testing.T) {
	db := storagetest.Open(t)
	_, err := newScheduler(t, db, Options{}).Answer("first", nil)
	var re *RequestError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "no tasks are known") {
		t.Errorf("empty database: got %v", err)
	}
}

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		"step-000041": true, "a": true, "A.b_c-9": true, strings.Repeat("x", 128): true,
		"": false, ".hidden": false, "-x": false, "a/b": false, "a b": false, strings.Repeat("x", 129): false, "é": false,
		"x.error": false, "x.error.1": true, "error": true, "x.errors": true, "x.Error": true,
	} {
		if ValidID(id) != want {
			t.Errorf("ValidID(%q) = %v", id, !want)
		}
	}
}

func TestStoredEdgesAreUsed(t *testing.T) {
	db := storagetest.Open(t)
	var b storage.Batch
	for k := range 6 {
		b.Tasks = append(b.Tasks, record.Task{Env: "e", Task: fmt.Sprintf("t%d", k)})
	}
	// t0 and t1 are near-duplicates.
	b.Edges = []storage.NodeEdges{
		{Node: storage.TaskKey{Env: "e", Task: "t0"}, Edges: []storage.Edge{{Env: "e", Task: "t1", Weight: 0.9, Sim: 0.99}}},
		{Node: storage.TaskKey{Env: "e", Task: "t1"}, Edges: []storage.Edge{{Env: "e", Task: "t0", Weight: 0.9, Sim: 0.99}}},
	}
	if _, err := db.Commit(&b); err != nil {
		t.Fatal(err)
	}
	s := newScheduler(t, db, Options{})
	st, err := s.load.load()
	if err != nil {
		t.Fatal(err)
	}
	if st.g.NumEdges() != 2 || st.g.Neighbors(0)[0].To != 1 {
		t.Fatalf("graph from stored edges: %d edges", st.g.NumEdges())
	}
	a := decode(t, must(s.Answer("one", []byte(`{"size": 5}`))))
	both := 0
	for _, task := range a.Tasks {
		if task.TaskID == "t0" || task.TaskID == "t1" {
			both++
		}
	}
	if both != 1 {
		t.Errorf("5 of 6 tasks with t0 and t1 near-duplicates: %d of them chosen, want 1", both)
	}
}

func TestBuildGraphWhenNoEdgesAreStored(t *testing.T) {
	db := storagetest.Open(t)
	fill(t, db, 2, 5)
	calls := 0
	build := func(tasks []record.Task) *graph.Graph {
		calls++
		// A chain over the tasks in the given order.
		envs := []string{"env-0", "env-1"}
		nodes := make([]graph.Node, len(tasks))
		adj := make([][]graph.Edge, len(tasks))
		for i, tk := range tasks {
			if tk.Text != "solve it" {
				t.Errorf("BuildGraph got a task without its catalogue text: %+v", tk)
			}
			nodes[i] = graph.Node{Env: int32(i / 5), Task: tk.Task}
			if i > 0 {
				adj[i] = append(adj[i], graph.Edge{To: int32(i - 1), Weight: 1, Sim: 0.5})
				adj[i-1] = append(adj[i-1], graph.Edge{To: int32(i), Weight: 1, Sim: 0.5})
			}
		}
		return graph.New(envs, nodes, adj)
	}
	s := newScheduler(t, db, Options{BuildGraph: build})
	for _, id := range []string{"a", "b"} {
		if _, err := s.Answer(id, nil); err != nil && !strings.Contains(err.Error(), "eligible") {
			t.Fatal(err)
		}
	}
	st, _ := s.load.load()
	if calls != 1 || st.g.NumEdges() != 18 {
		t.Errorf("graph built %d times (want once while the tasks stay), %d edges (want 18)", calls, st.g.NumEdges())
	}
}

func TestPredictEnvs(t *testing.T) {
	db := storagetest.Open(t)
	var b storage.Batch
	for k := range 10 {
		b.Tasks = append(b.Tasks, record.Task{Env: "solved", Task: fmt.Sprint(k)}, record.Task{Env: "coin", Task: fmt.Sprint(k)})
		for r := range 8 {
			b.Rollouts = append(b.Rollouts,
				storage.Rollout{Rollout: record.Rollout{Env: "solved", Task: fmt.Sprint(k), Reward: 1, Step: 1, HasStep: true}},
				storage.Rollout{Rollout: record.Rollout{Env: "coin", Task: fmt.Sprint(k), Reward: float64(r % 2), Step: 1, HasStep: true}})
		}
	}
	b.Tasks = append(b.Tasks, record.Task{Env: "new", Task: "x"})
	if _, err := db.Commit(&b); err != nil {
		t.Fatal(err)
	}
	envs, err := PredictEnvs(db, Options{}, 8)
	if err != nil {
		t.Fatal(err)
	}
	solved, coin, fresh := envs["solved"], envs["coin"], envs["new"]
	if solved.Tasks != 10 || solved.Degenerate < 0.7 || solved.Variance > 0.05 {
		t.Errorf("an environment whose tasks are all solved: %+v", solved)
	}
	if coin.Degenerate > 0.1 || coin.Variance < 0.18 {
		t.Errorf("an environment of fair coins: %+v", coin)
	}
	// the feature prior pools the environments: one never tried starts between the others
	// (with environment priors alone it would be Beta(1, 1): 2/9 degenerate)
	if fresh.Tasks != 1 || fresh.Degenerate <= coin.Degenerate || fresh.Degenerate >= solved.Degenerate {
		t.Errorf("an environment never tried: %+v, want between the coins %+v and the solved %+v", fresh, coin, solved)
	}
	envOnly := propagate.DefaultParams()
	envOnly.FeatureRidge = 0
	if envs, err = PredictEnvs(db, Options{Predict: &envOnly}, 8); err != nil {
		t.Fatal(err)
	}
	// nothing measured yet: the prior Beta(κ/2, κ/2) with its count scaled by the dispersion
	// correction's start (Beta(0.6, 0.6): 0.344 degenerate; the prior alone, 2/9)
	half := envOnly.Kappa * envOnly.DispersionStart / 2
	if fresh, want := envs["new"], propagate.BetaBinomialDegenerate(half, half, 8); math.Abs(fresh.Degenerate-want) > 1e-3 {
		t.Errorf("an environment never tried, environment priors alone: %+v, want %.3f degenerate", fresh, want)
	}
}

// edgeSet is a graph's edges by name, for comparing graphs whose node numbers differ.
func edgeSet(g *graph.Graph) map[string]float32 {
	out := map[string]float32{}
	for i, nd := range g.Nodes {
		for _, e := range g.Neighbors(i) {
			to := g.Nodes[e.To]
			out[g.Envs[nd.Env]+"/"+nd.Task+">"+g.Envs[to.Env]+"/"+to.Task] = e.Weight
		}
	}
	return out
}

func TestRolloutOnlyTasksGrowTheGraphWithoutARebuild(t *testing.T) {
	db := storagetest.Open(t)
	var b storage.Batch
	words := []string{"flight booking", "hotel booking", "flight change", "refund order", "order status", "hotel refund"}
	for k, w := range words {
		b.Tasks = append(b.Tasks, record.Task{Env: "travel", Task: fmt.Sprintf("t%d", k), Text: w + " for a customer", Tools: []string{"search"}})
	}
	if _, err := db.Commit(&b); err != nil {
		t.Fatal(err)
	}
	calls := 0
	build := func(tasks []record.Task) *graph.Graph { calls++; return DefaultBuildGraph(tasks) }
	l := loader{db: db, build: build}
	st, err := l.load()
	if err != nil {
		t.Fatal(err)
	}
	before := edgeSet(st.g)
	if len(before) == 0 {
		t.Fatal("the catalogue made no edges")
	}
	// Rollouts of tasks the catalogue does not have: a node each, no rebuild, same edges.
	b = storage.Batch{Rollouts: []storage.Rollout{
		{Rollout: record.Rollout{Env: "travel", Task: "a-new", Reward: 1}},
		{Rollout: record.Rollout{Env: "zoo", Task: "x", Reward: 0}},
	}}
	if _, err := db.Commit(&b); err != nil {
		t.Fatal(err)
	}
	st, err = l.load()
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || st.g.Len() != 8 || len(st.g.Envs) != 2 || fmt.Sprint(edgeSet(st.g)) != fmt.Sprint(before) {
		t.Errorf("after rollout-only tasks: %d builds, %d nodes, envs %v, edges changed: %v", calls, st.g.Len(), st.g.Envs, fmt.Sprint(edgeSet(st.g)) != fmt.Sprint(before))
	}
	// The grown graph is the one a fresh build of the whole database gives.
	fresh := loader{db: db, build: DefaultBuildGraph}
	fst, err := fresh.load()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(edgeSet(fst.g)) != fmt.Sprint(edgeSet(st.g)) {
		t.Errorf("grown graph differs from a fresh build:\n%v\n%v", edgeSet(st.g), edgeSet(fst.g))
	}
	// A catalogue row, even for a known task, rebuilds.
	b = storage.Batch{Tasks: []record.Task{{Env: "travel", Task: "a-new", Text: "flight booking refund", Tools: []string{"search"}}}}
	if _, err := db.Commit(&b); err != nil {
		t.Fatal(err)
	}
	if _, err := l.load(); err != nil || calls != 2 {
		t.Errorf("a new catalogue row: %d builds (want 2), %v", calls, err)
	}
}

func TestWarmBuildsTheGraphOnce(t *testing.T) {
	db := storagetest.Open(t)
	fill(t, db, 2, 10)
	calls := 0
	build := func(tasks []record.Task) *graph.Graph { calls++; return DefaultBuildGraph(tasks) }
	s := newScheduler(t, db, Options{BuildGraph: build, Size: 4})
	if err := s.Warm(); err != nil || calls != 1 {
		t.Fatalf("warm: %v, %d builds", err, calls)
	}
	if _, err := s.Answer("after-warm", nil); err != nil || calls != 1 {
		t.Errorf("the request after Warm built the graph again (%d builds, %v)", calls, err)
	}
}
