package storage

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/envsched/envsched/record"
)

// TestTaskLogCheckpoints commits with a tiny checkpoint size, so that task records move from
// the log into the tasks bucket many times, and checks that readers always see every task once,
// in order, with the statistics a recomputation gives.
func TestTaskLogCheckpoints(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.tasks.limit = 2000 // a checkpoint every few commits
	for i := 0; i < 40; i++ {
		var b Batch
		for j := 0; j < 5; j++ {
			task := fmt.Sprintf("t%02d", (i*7+j)%23)
			b.Rollouts = append(b.Rollouts, Rollout{Rollout: record.Rollout{Env: fmt.Sprint("e", j%2), Task: task, Reward: float64(j % 2), Step: int64(i), HasStep: true}})
		}
		if _, err := db.Commit(&b); err != nil {
			t.Fatal(err)
		}
		if err := db.Check(""); err != nil {
			t.Fatalf("after commit %d: %v", i, err)
		}
		for k := 0; k < 2; k++ { // the second read comes from the readers' cache of the log
			var n int64
			_ = db.View(func(r *Reader) error {
				return r.Tasks(false, func(ti TaskInfo) error { n += ti.Stats.Rollouts; return nil })
			})
			if n != int64(5*(i+1)) {
				t.Fatalf("after commit %d, read %d: tasks hold %d rollouts, want %d", i, k, n, 5*(i+1))
			}
		}
	}
	var names []string
	var total int64
	_ = db.View(func(r *Reader) error {
		return r.Tasks(false, func(ti TaskInfo) error {
			names = append(names, ti.Env+"/"+ti.Task.Task)
			total += ti.Stats.Rollouts
			return nil
		})
	})
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Fatalf("tasks out of order or repeated: %v", names)
		}
	}
	if total != 200 {
		t.Errorf("tasks hold %d rollouts, want 200", total)
	}
	db.Close()
	db, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Check(""); err != nil {
		t.Fatalf("after reopen: %v", err)
	}
}
