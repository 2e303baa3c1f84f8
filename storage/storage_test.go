package storage_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/stats"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

func rollout(env, task string, reward float64, step int64, group, id string) storage.Rollout {
	return storage.Rollout{Rollout: record.Rollout{Env: env, Task: task, Reward: reward, Step: step,
		HasStep: step != 0, Group: group, RolloutID: id}, File: 1}
}

func openAt(t *testing.T, path string, opts storage.Options) *storage.DB {
	t.Helper()
	db, err := storage.Open(path, opts)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	return db
}

func commit(t *testing.T, db *storage.DB, b *storage.Batch) storage.Result {
	t.Helper()
	res, err := db.Commit(b)
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	return res
}

func TestCommitCountsAndStats(t *testing.T) {
	db := storagetest.Open(t)
	var added []record.Task
	b := &storage.Batch{
		Files: []storage.FileState{{ID: 1, Kind: storage.KindRollouts, Path: "rollouts/a.jsonl", Offset: 100}},
		Tasks: []record.Task{{Env: "e", Task: "t1", Text: "hello", Tools: []string{"x"}}},
		Rollouts: []storage.Rollout{
			rollout("e", "t1", 1, 1, "", "r1"),
			rollout("e", "t1", 0, 1, "", "r2"),
			rollout("e", "t1", 2, 1, "", "r2"), // duplicate
			rollout("e", "t2", 1.5, 1, "g", "r3"),
			rollout("e", "t2", 1, 1, "g", "r4"),
		},
		Quarantine: []storage.QuarantineEntry{{File: 1, Path: "rollouts/a.jsonl", Offset: 7, Reason: "not a JSON object", Head: []byte("{")}},
		Adjacency: func(_ *storage.Reader, a, _ []record.Task) ([]storage.NodeEdges, error) {
			added = a
			return []storage.NodeEdges{{Node: storage.TaskKey{Env: "e", Task: "t2"},
				Edges: []storage.Edge{{Env: "e", Task: "t1", Weight: 0.5, Sim: 0.7}}}}, nil
		},
	}
	res := commit(t, db, b)
	if res.Rollouts != 4 || res.Duplicates != 1 || res.Clipped != 1 || res.Quarantined != 1 || res.NewTasks != 2 {
		t.Fatalf("result %+v", res)
	}
	if len(added) != 2 || added[0].Text != "hello" || added[1].Task != "t2" || added[1].Text != "" {
		t.Errorf("adjacency saw added tasks %+v; want the catalogue row of t1, then t2 bare", added)
	}
	envs, err := db.Envs()
	if err != nil {
		t.Fatal(err)
	}
	if e := envs["e"]; e.Tasks != 2 || e.TasksSeen != 2 || e.Rollouts != 4 || e.Groups != 2 || e.Degenerate != 1 || e.Sum != 3 {
		t.Fatalf("env %+v; want 2 tasks, 4 rollouts, sum 3, 2 groups, 1 degenerate", e)
	}
	var edges []storage.NodeEdges
	_ = db.View(func(r *storage.Reader) error {
		return r.Edges(func(n storage.NodeEdges) error { edges = append(edges, n); return nil })
	})
	if len(edges) != 1 || edges[0].Edges[0].Sim != 0.7 {
		t.Errorf("edges %+v", edges)
	}
}

func TestStoredRolloutsAndGroups(t *testing.T) {
	db := storagetest.Open(t)
	commit(t, db, &storage.Batch{Rollouts: []storage.Rollout{
		rollout("e", "t", -1, 3, "", "x"),
		rollout("e", "t", 1, 3, "", ""),
		rollout("e", "u", 0.5, 0, "g", ""),
	}})
	var got []string
	err := db.View(func(r *storage.Reader) error {
		return r.Rollouts(func(sr *storage.StoredRollout) error {
			got = append(got, fmt.Sprintf("%d %s/%s %g clipped=%v round=%d step=%v/%d group=%q id=%q",
				sr.Seq, sr.Env, sr.Task, sr.Reward, sr.Clipped, sr.Round, sr.HasStep, sr.Step, sr.Group, sr.RolloutID))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`1 e/t 0 clipped=true round=3 step=true/3 group="" id="x"`,
		`2 e/t 1 clipped=false round=3 step=true/3 group="" id=""`,
		`3 e/u 0.5 clipped=false round=0 step=false/0 group="g" id=""`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rollouts\n%v\nwant\n%v", got, want)
	}
	var groups []string
	_ = db.View(func(r *storage.Reader) error {
		return r.Groups("e", "t", func(round int64, g string, st stats.Group) error {
			groups = append(groups, fmt.Sprintf("%d %q n=%d min=%g max=%g", round, g, st.N, st.Min, st.Max))
			return nil
		})
	})
	if want := []string{`3 "" n=2 min=0 max=1`}; !reflect.DeepEqual(groups, want) {
		t.Errorf("groups of e/t %v, want %v", groups, want)
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db := openAt(t, path, storage.Options{Reward: &storage.Range{Min: -1, Max: 1}, Decay: 0.8})
	commit(t, db, &storage.Batch{Rollouts: []storage.Rollout{rollout("e", "t", 0, 1, "", "id")}})
	if err := db.StoreAnswer("req-1", 4, []byte(`{"id":"req-1"}`), []storage.TaskKey{{Env: "e", Task: "t"}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	db = openAt(t, path, storage.Options{})
	defer db.Close()
	if c := db.Config(); c.Reward != (storage.Range{Min: -1, Max: 1}) || c.Decay != 0.8 || c.Schema != 1 { // its answers are small: stored whole, schema 1
		t.Errorf("config after reopen %+v", c)
	}
	res := commit(t, db, &storage.Batch{Rollouts: []storage.Rollout{rollout("e", "t", 1, 1, "", "id")}})
	if res.Duplicates != 1 || res.Rollouts != 0 {
		t.Errorf("a rollout id stored before the restart: %+v; want a duplicate", res)
	}
	a, err := db.Answer("req-1")
	if err != nil || string(a) != `{"id":"req-1"}` {
		t.Errorf("answer after reopen %q %v", a, err)
	}
	var ti storage.TaskInfo
	_ = db.View(func(r *storage.Reader) error { ti, err = r.Task("e", "t"); return err })
	if ti.Stats.Chosen != 1 || ti.Stats.LastChosen != 4 || ti.Stats.Rollouts != 1 || ti.Stats.Sum != 0.5 {
		t.Errorf("task after reopen %+v; want chosen once at 4, one rollout normalised to 0.5", ti.Stats)
	}
	if c, _ := db.Counters(); c.Round != 4 || c.LastRequest != "req-1" || c.RequestsAnswered != 1 {
		t.Errorf("counters %+v", c)
	}
	storagetest.MustCheck(t, db, "")
}

func TestOpenRefusals(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.db")
	db := openAt(t, path, storage.Options{})
	db.Close()
	if _, err := storage.Open(path, storage.Options{Reward: &storage.Range{Min: 0, Max: 5}}); !errors.Is(err, storage.ErrConfigMismatch) {
		t.Errorf("another reward range: %v; want ErrConfigMismatch", err)
	} else if !strings.Contains(err.Error(), "leave --reward-min and --reward-max out to use the stored range") {
		// newuser14: the message said what differs, not what to do about it.
		t.Errorf("another reward range: %q does not say what to do", err)
	}
	if _, err := storage.Open(path, storage.Options{Decay: 0.5}); !errors.Is(err, storage.ErrConfigMismatch) {
		t.Errorf("another decay: %v; want ErrConfigMismatch", err)
	}
	if _, err := storage.Open(filepath.Join(dir, "new.db"), storage.Options{Reward: &storage.Range{Min: 1, Max: 1}}); err == nil {
		t.Error("an empty reward range was accepted")
	}
	if _, err := storage.Open(filepath.Join(dir, "missing.db"), storage.Options{ReadOnly: true}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("read-only open of a missing file: %v", err)
	}
	held := openAt(t, path, storage.Options{})
	defer held.Close()
	_, err := storage.Open(path, storage.Options{Timeout: 100e6})
	if !errors.Is(err, storage.ErrLocked) || !bytes.Contains([]byte(err.Error()), []byte(path)) {
		t.Errorf("second open: %v; want ErrLocked naming the path", err)
	}
}

func TestStoreAnswerIsAllOrNothing(t *testing.T) {
	db := storagetest.Open(t)
	commit(t, db, &storage.Batch{Tasks: []record.Task{{Env: "e", Task: "t"}}})
	err := db.StoreAnswer("r", 1, []byte("x"), []storage.TaskKey{{Env: "e", Task: "t"}, {Env: "e", Task: "missing"}}, nil)
	if !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("answer choosing an unknown task: %v", err)
	}
	if _, err := db.Answer("r"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("the failed answer was stored: %v", err)
	}
	if err := db.StoreAnswer("r", 1, []byte("x"), []storage.TaskKey{{Env: "e", Task: "t"}, {Env: "e", Task: "t"}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.StoreAnswer("r", 2, []byte("y"), nil, nil); err == nil {
		t.Error("an answer was stored twice under one id")
	}
	var ti storage.TaskInfo
	_ = db.View(func(r *storage.Reader) error { ti, err = r.Task("e", "t"); return err })
	if ti.Stats.Chosen != 2 || ti.Stats.LastChosen != 1 {
		t.Errorf("chosen %d at %d; want 2 at 1 (the task twice in one batch)", ti.Stats.Chosen, ti.Stats.LastChosen)
	}
}

func TestSnapshotAndCompact(t *testing.T) {
	db := storagetest.Open(t)
	commit(t, db, &storage.Batch{Rollouts: []storage.Rollout{rollout("e", "t", 1, 1, "", "a")}})
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "snap.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.WriteSnapshot(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := db.Compact(filepath.Join(dir, "compact.db")); err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(filepath.Join(dir, "compact.db")); err == nil {
		t.Error("Compact overwrote an existing file")
	}
	for _, name := range []string{"snap.db", "compact.db"} {
		c := openAt(t, filepath.Join(dir, name), storage.Options{ReadOnly: true})
		if n, _ := c.Counters(); n.Rollouts != 1 {
			t.Errorf("%s holds %d rollouts, want 1", name, n.Rollouts)
		}
		storagetest.MustCheck(t, c, "")
		c.Close()
	}
}

// CompactInPlace puts a copy with the same records in the database's place: reopened, the path
// holds the same counters, statistics and rollouts, passes Check, and nothing else is left in
// the folder.
func TestCompactInPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "envsched.db")
	db := openAt(t, path, storage.Options{})
	for i := range 40 {
		var b storage.Batch
		for k := range 50 {
			b.Rollouts = append(b.Rollouts, rollout("e", fmt.Sprintf("t%d", k), float64(k%2), int64(i), "", fmt.Sprintf("r%d-%d", i, k)))
		}
		commit(t, db, &b)
	}
	before, _ := os.Stat(path)
	wantCtr, _ := db.Counters()
	wantEnvs, _ := db.Envs()
	size, err := db.CompactInPlace()
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if size != after.Size() || os.SameFile(before, after) {
		t.Errorf("returned size %d, file %d bytes: want a new file, of the size returned", size, after.Size())
	}
	names, _ := os.ReadDir(dir)
	if len(names) != 1 || names[0].Name() != "envsched.db" {
		t.Errorf("folder holds %v; want only envsched.db", names)
	}
	re := openAt(t, path, storage.Options{})
	defer re.Close()
	gotCtr, _ := re.Counters()
	gotEnvs, _ := re.Envs()
	if gotCtr != wantCtr || len(gotEnvs) != 1 || gotEnvs["e"] != wantEnvs["e"] {
		t.Errorf("compacted: %+v %+v; want %+v %+v", gotCtr, gotEnvs, wantCtr, wantEnvs)
	}
	storagetest.MustCheck(t, re, "")
}

// A database opened through a symbolic link (DIR/envsched.db linking to a file on another disk)
// is compacted where the link leads: the link stays, and the file it names is the compacted one.
// The copy was written beside the link and renamed over it: the link became a second database
// on DIR's disk, and the file it named stayed behind, uncompacted, for anything that opens it by
// its own path.
func TestCompactInPlaceThroughALink(t *testing.T) {
	real := filepath.Join(t.TempDir(), "envsched.db")
	db := openAt(t, real, storage.Options{})
	var b storage.Batch
	for k := range 500 {
		b.Rollouts = append(b.Rollouts, rollout("e", fmt.Sprintf("t%d", k%50), float64(k%2), int64(k/50), "", fmt.Sprintf("r%d", k)))
	}
	commit(t, db, &b)
	want, _ := db.Counters()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	linkDir := t.TempDir()
	link := filepath.Join(linkDir, "envsched.db")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(real)
	db = openAt(t, link, storage.Options{})
	if _, err := db.CompactInPlace(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced (%v, %v)", fi.Mode(), err)
	}
	if after, err := os.Stat(real); err != nil || os.SameFile(before, after) {
		t.Errorf("the file the link names was not replaced by the compacted copy (%v)", err)
	}
	if names, _ := os.ReadDir(linkDir); len(names) != 1 {
		t.Errorf("the link's folder holds %v; want only the link", names)
	}
	re := openAt(t, real, storage.Options{ReadOnly: true})
	defer re.Close()
	if got, _ := re.Counters(); got != want {
		t.Errorf("compacted: %+v; want %+v", got, want)
	}
}
