package schedule_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/envsched/envsched/graph/graphtest"
	"github.com/envsched/envsched/ingest"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/schedule"
	"github.com/envsched/envsched/storage"
)

// writeCatalog writes n synthetic tasks as DIR/catalog/c.jsonl and returns DIR.
func writeCatalog(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "catalog"), 0o755); err != nil {
		t.Fatal(err)
	}
	var buf []byte
	for _, task := range graphtest.Catalog(n, 4, 7) {
		row, err := json.Marshal(map[string]any{"env": task.Env, "task_id": task.Task, "text": task.Text, "tools": task.Tools})
		if err != nil {
			t.Fatal(err)
		}
		buf = append(append(buf, row...), '\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "catalog", "c.jsonl"), buf, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// scanInto ingests dir into the database at path with opts (NewIngester's hooks added) and
// returns the scan's error; ctx may stop it between commits.
func scanInto(t *testing.T, ctx context.Context, path, dir string, opts ingest.Options) (ingest.Summary, error) {
	t.Helper()
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	in, err := schedule.NewIngester(db, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return in.Scan(ctx)
}

// allLists returns every stored adjacency list and whether the edges are marked pending.
func allLists(t *testing.T, path string) (map[storage.TaskKey][]storage.Edge, bool) {
	t.Helper()
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[storage.TaskKey][]storage.Edge{}
	pending := false
	err = db.View(func(r *storage.Reader) error {
		c, err := r.Counters()
		pending = c.EdgesPending
		if err != nil {
			return err
		}
		return r.Edges(func(ne storage.NodeEdges) error { out[ne.Node] = ne.Edges; return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, pending
}

// TestEdgesDoNotDependOnCommitSplits: one catalogue ingested in one commit, in commits of 97
// rows, of 1,000 rows, and of whatever 1 ms of reading gives, stores the same adjacency lists,
// weights and similarities to the bit (the graph is built once per scan, from all it read).
func TestEdgesDoNotDependOnCommitSplits(t *testing.T) {
	dir := writeCatalog(t, 3000)
	splits := map[string]ingest.Options{
		"one":    {MaxRecords: 1 << 20, MaxBytes: 1 << 40, MaxDelay: time.Hour},
		"97":     {MaxRecords: 97, MaxDelay: time.Hour},
		"1000":   {MaxRecords: 1000, MaxDelay: time.Hour},
		"1ms":    {MaxDelay: time.Millisecond},
		"small2": {MaxRecords: 2, MaxDelay: time.Hour},
	}
	want := map[storage.TaskKey][]storage.Edge(nil)
	for _, name := range []string{"one", "97", "1000", "1ms", "small2"} {
		path := filepath.Join(t.TempDir(), "e.db")
		sum, err := scanInto(t, context.Background(), path, dir, splits[name])
		if err != nil {
			t.Fatal(err)
		}
		got, pending := allLists(t, path)
		if pending || len(got) < 1000 {
			t.Fatalf("%s: %d lists, pending %v", name, len(got), pending)
		}
		t.Logf("%s: %d commits, %d lists", name, sum.Commits, len(got))
		if want == nil {
			want = got
			continue
		}
		if !reflect.DeepEqual(got, want) {
			diff := 0
			for k, l := range want {
				if !reflect.DeepEqual(got[k], l) {
					diff++
				}
			}
			t.Errorf("%s: %d of %d lists differ from one commit's (%d lists)", name, diff, len(want), len(got))
		}
	}
}

// TestStoppedIngestResumesToTheSameEdges: a catalogue ingest stopped after k commits (during
// the task commits, between them and the edge commits, or during those), then resumed by a new
// ingester, stores exactly the lists of an ingest that was never stopped, and clears the mark.
func TestStoppedIngestResumesToTheSameEdges(t *testing.T) {
	dir := writeCatalog(t, 2000)
	small := ingest.Options{MaxRecords: 100, MaxDelay: time.Hour}
	ref := filepath.Join(t.TempDir(), "ref.db")
	sum, err := scanInto(t, context.Background(), ref, dir, small)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := allLists(t, ref)
	stopped := 0
	for stopAt := 1; stopAt < sum.Commits+2; stopAt++ {
		path := filepath.Join(t.TempDir(), "e.db")
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		o := small
		o.BeforeCommit = func() {
			if n++; n == stopAt {
				cancel() // this commit goes through; the scan stops before the next
			}
		}
		_, err := scanInto(t, ctx, path, dir, o)
		cancel()
		if err == nil {
			continue // the scan made fewer commits this time (a batch grows while one commits)
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("stop at %d: %v", stopAt, err)
		}
		stopped++
		if _, pending := allLists(t, path); !pending {
			t.Errorf("stop at %d: edges not marked pending", stopAt)
		}
		if _, err := scanInto(t, context.Background(), path, dir, small); err != nil {
			t.Fatal(err)
		}
		got, pending := allLists(t, path)
		if pending || !reflect.DeepEqual(got, want) {
			t.Errorf("stop at %d: pending %v, %d lists, want the %d of the uninterrupted ingest", stopAt, pending,
				len(got), len(want))
		}
	}
	if stopped < 3 {
		t.Fatalf("only %d of %d stops happened", stopped, sum.Commits)
	}
	t.Logf("%d commits; stopped and resumed after each of %d", sum.Commits, stopped)
}

// appendCatalog writes tasks as another catalogue file of dir.
func appendCatalog(t *testing.T, dir, name string, tasks []record.Task) {
	t.Helper()
	var buf []byte
	for _, task := range tasks {
		row, err := json.Marshal(map[string]any{"env": task.Env, "task_id": task.Task, "text": task.Text, "tools": task.Tools})
		if err != nil {
			t.Fatal(err)
		}
		buf = append(append(buf, row...), '\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "catalog", name), buf, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOneShotIngesterStoresTheSameEdges: the one-shot ingester, whose builder drops its index
// before the lists are stored, stores the lists the daemon's ingester stores, in one commit and
// in many; and a second scan of the same ingester (which must build the graph again from the
// database) stores the lists the daemon's second scan stores from the builder it kept.
func TestOneShotIngesterStoresTheSameEdges(t *testing.T) {
	for name, opts := range map[string]ingest.Options{
		"one": {MaxRecords: 1 << 20, MaxBytes: 1 << 40, MaxDelay: time.Hour},
		"97":  {MaxRecords: 97, MaxDelay: time.Hour},
	} {
		t.Run(name, func(t *testing.T) {
			dir := writeCatalog(t, 2000)
			more := graphtest.Catalog(60, 4, 8)
			for i := range more {
				more[i].Task = "more-" + more[i].Task
			}
			var want [2]map[storage.TaskKey][]storage.Edge
			for i, newIn := range []func(*storage.DB, string, ingest.Options) (*ingest.Ingester, error){
				schedule.NewIngester, schedule.NewOneShotIngester,
			} {
				os.Remove(filepath.Join(dir, "catalog", "d.jsonl"))
				path := filepath.Join(t.TempDir(), "e.db")
				db, err := storage.Open(path, storage.Options{})
				if err != nil {
					t.Fatal(err)
				}
				in, err := newIn(db, dir, opts)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := in.Scan(context.Background()); err != nil {
					t.Fatal(err)
				}
				first := dbLists(t, db)
				appendCatalog(t, dir, "d.jsonl", more)
				if _, err := in.Scan(context.Background()); err != nil {
					t.Fatal(err)
				}
				second := dbLists(t, db)
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				if len(first) < 1000 || len(second) <= len(first) {
					t.Fatalf("%d lists after the first scan, %d after the second", len(first), len(second))
				}
				if i == 0 {
					want = [2]map[storage.TaskKey][]storage.Edge{first, second}
					continue
				}
				if !reflect.DeepEqual(first, want[0]) {
					t.Errorf("first scan: the one-shot ingester stored other lists than the daemon's (%d vs %d)", len(first), len(want[0]))
				}
				if !reflect.DeepEqual(second, want[1]) {
					t.Errorf("second scan: the one-shot ingester stored other lists than the daemon's (%d vs %d)", len(second), len(want[1]))
				}
			}
		})
	}
}

// dbLists returns every adjacency list stored in db, and fails when the edges are marked pending.
func dbLists(t *testing.T, db *storage.DB) map[storage.TaskKey][]storage.Edge {
	t.Helper()
	out := map[storage.TaskKey][]storage.Edge{}
	err := db.View(func(r *storage.Reader) error {
		c, err := r.Counters()
		if err != nil {
			return err
		}
		if c.EdgesPending {
			return errors.New("edges pending after a scan")
		}
		return r.Edges(func(ne storage.NodeEdges) error { out[ne.Node] = ne.Edges; return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
