package storage_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// Pages released (madvise MADV_DONTNEED on bbolt's shared read-only mapping) by readers in
// several goroutines at once, every few values, while a writer commits batches that grow the
// file past its mapping (bbolt remaps it between transactions) never change what any reader
// reads: every task's text and every stored edge (read as views into the mapping) is what its
// name says it must be. Dropped pages must come back from the page cache, not zeroed.
func TestReleasePagesUnderConcurrentReadersAndAGrowingFile(t *testing.T) {
	defer storage.SetReleaseEvery(3)()
	db := storagetest.Open(t)
	textOf := func(task string) string { return strings.Repeat(task+" words ", 40) }
	batch := func(round int) *storage.Batch {
		b := &storage.Batch{}
		for i := range 200 {
			task := fmt.Sprintf("r%03d-t%03d", round, i)
			b.Tasks = append(b.Tasks, record.Task{Env: fmt.Sprint("env-", i%3), Task: task, Text: textOf(task)})
			b.Edges = append(b.Edges, storage.NodeEdges{Node: storage.TaskKey{Env: fmt.Sprint("env-", i%3), Task: task},
				Edges: []storage.Edge{{Env: "to-" + task, Task: task + "-n", Weight: 1, Sim: 0.5}}})
		}
		return b
	}
	commit(t, db, batch(0))
	const rounds = 8
	var done atomic.Bool
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for reads := 0; !done.Load() || reads < 2; reads++ {
				err := db.View(func(r *storage.Reader) error {
					if err := r.Tasks(true, func(ti storage.TaskInfo) error {
						if ti.Text != textOf(ti.Task.Task) {
							return fmt.Errorf("task %s/%s: text of %d bytes differs", ti.Env, ti.Task.Task, len(ti.Text))
						}
						return nil
					}); err != nil {
						return err
					}
					r.ReleasePages()
					return r.EdgeViews(func(node storage.TaskKey, edges []storage.Edge) error {
						if len(edges) != 1 || edges[0].Env != "to-"+node.Task || edges[0].Task != node.Task+"-n" {
							return fmt.Errorf("edges of %s/%s: %v", node.Env, node.Task, edges)
						}
						return nil
					})
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	before := fileSize(t, db.Path())
	for round := 1; round <= rounds; round++ {
		commit(t, db, batch(round))
	}
	done.Store(true)
	wg.Wait()
	if after := fileSize(t, db.Path()); after <= before {
		t.Errorf("the file did not grow (%d bytes, then %d): no remap was tested", before, after)
	}
	storagetest.MustCheck(t, db, "")
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
