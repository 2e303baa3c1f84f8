package storage

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/envsched/envsched/record"
)

// A writer whose first transaction finds the task log in the readers' cache (a started
// daemon's first answer, after its first read) takes a copy of it, and goes on exactly as one
// that decoded the log: the same overlay and log size after every commit and answer, the
// checkpoints at the same commits, the same tasks read back. The readers' map is not changed.
func TestWriterTakesTheLogFromTheCache(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.tasks.limit = 4000
	commit := func(db *DB, i int) {
		t.Helper()
		var b Batch
		for j := range 6 {
			b.Rollouts = append(b.Rollouts, Rollout{Rollout: record.Rollout{Env: fmt.Sprint("e", j%2),
				Task: fmt.Sprintf("t%02d", (i*5+j)%29), Reward: float64((i + j) % 2), Step: int64(i), HasStep: true}})
		}
		if _, err := db.Commit(&b); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 9 {
		commit(db, i)
	}
	db.Close()
	if db.tasks.size == 0 {
		t.Fatal("the log is empty: nothing to take from the cache")
	}
	cp := func(dst string) string {
		in, _ := os.Open(path)
		defer in.Close()
		out, _ := os.Create(dst)
		defer out.Close()
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	var dbs [2]*DB
	for k, p := range []string{cp(filepath.Join(dir, "cached.db")), cp(filepath.Join(dir, "read.db"))} {
		if dbs[k], err = Open(p, Options{}); err != nil {
			t.Fatal(err)
		}
		defer dbs[k].Close()
		dbs[k].tasks.limit = 4000
	}
	before := allTasks(t, dbs[0]) // fills the readers' cache of dbs[0]
	m0, size0, _ := func() (map[TaskKey]taskRecord, int, bool) {
		dbs[0].logCache.mu.Lock()
		defer dbs[0].logCache.mu.Unlock()
		return dbs[0].logCache.m, dbs[0].logCache.size, true
	}()
	if m0 == nil || size0 != db.tasks.size {
		t.Fatalf("the cache holds %d records, %d bytes; the log has %d bytes", len(m0), size0, db.tasks.size)
	}
	var known []TaskKey
	for k := range before {
		known = append(known, k)
	}
	slices.SortFunc(known, func(a, b TaskKey) int { return cmp.Or(cmp.Compare(a.Env, b.Env), cmp.Compare(a.Task, b.Task)) })
	copied := make(map[TaskKey]taskRecord, len(m0))
	for k, v := range m0 {
		copied[k] = v
	}
	checkpoints := 0
	for i := 9; i < 40; i++ {
		for _, d := range dbs {
			if i%3 == 0 {
				chosen := []TaskKey{known[i%len(known)], known[(i*7+1)%len(known)]}
				if err := d.StoreAnswer(fmt.Sprint("a", i), int64(i), []byte("{}"), chosen, nil); err != nil {
					t.Fatal(err)
				}
			} else {
				commit(d, i)
			}
		}
		if dbs[0].tasks.size != dbs[1].tasks.size ||
			!reflect.DeepEqual(dbs[0].tasks.m, dbs[1].tasks.m) {
			t.Fatalf("after write %d: overlays of %d and %d records, logs of %d and %d bytes", i,
				len(dbs[0].tasks.m), len(dbs[1].tasks.m), dbs[0].tasks.size, dbs[1].tasks.size)
		}
		if dbs[0].tasks.size < 200 {
			checkpoints++
		}
	}
	if checkpoints == 0 {
		t.Fatal("no checkpoint among the writes")
	}
	if !reflect.DeepEqual(allTasks(t, dbs[0]), allTasks(t, dbs[1])) {
		t.Fatal("the two databases read back other tasks")
	}
	if !reflect.DeepEqual(m0, copied) {
		t.Fatal("the writer changed the readers' cached map")
	}
	if len(before) == 0 {
		t.Fatal("no task read")
	}
}
