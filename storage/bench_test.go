package storage_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/stats"
	"github.com/envsched/envsched/storage"
)

// The reopen benchmark needs a database of 10 million rollouts. It is made once per test
// binary run (about a minute) in a temporary folder removed by TestMain.
var big struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if big.dir != "" {
		os.RemoveAll(big.dir)
	}
	os.Exit(code)
}

const (
	bigRollouts = 10_000_000
	bigEnvs     = 5
	bigTasks    = 20_000 // per environment: 100k tasks
	bigBatch    = 2048   // tasks per step
	bigGroup    = 8
)

// bigDB writes 10M rollouts (steps of 2048 tasks × 8, each with a rollout id) through Commit.
func bigDB(b *testing.B) string {
	big.once.Do(func() {
		if big.dir, big.err = os.MkdirTemp("", "envsched-bench-"); big.err != nil {
			return
		}
		big.path = filepath.Join(big.dir, "big.db")
		start := time.Now()
		big.err = fillBig(big.path)
		b.Logf("made a database of %d rollouts in %v", bigRollouts, time.Since(start))
	})
	if big.err != nil {
		b.Fatal(big.err)
	}
	return big.path
}

func fillBig(path string) error {
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	var batch storage.Batch
	n := 0
	for step := int64(1); n < bigRollouts; step++ {
		batch.Reset()
		for k := 0; k < bigBatch && n < bigRollouts; k++ {
			idx := ((int(step)*bigBatch + k) * 7919) % (bigEnvs * bigTasks) // every task, spread out
			env, task := fmt.Sprint("env-", idx%bigEnvs), fmt.Sprint("task-", idx/bigEnvs)
			for j := 0; j < bigGroup && n < bigRollouts; j++ {
				batch.Rollouts = append(batch.Rollouts, storage.Rollout{Rollout: record.Rollout{Env: env, Task: task,
					Reward: float64((j + k) % 2), Step: step, HasStep: true, RolloutID: bigID(n)}})
				n++
			}
		}
		if _, err := db.Commit(&batch); err != nil {
			return err
		}
	}
	return db.Close()
}

// BenchmarkReopen10M opens a database of 10 million rollouts and loads what the scheduler
// needs to be ready: every task's statistics, the environments and the counters.
//
//	go test ./storage -run '^$' -bench Reopen10M -benchtime 5x
func BenchmarkReopen10M(b *testing.B) {
	path := bigDB(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		db, err := storage.Open(path, storage.Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		tasks := make(map[storage.TaskKey]stats.Task, bigEnvs*bigTasks)
		var c storage.Counters
		err = db.View(func(r *storage.Reader) error {
			if _, err := r.Envs(); err != nil {
				return err
			}
			if c, err = r.Counters(); err != nil {
				return err
			}
			return r.Tasks(false, func(ti storage.TaskInfo) error {
				tasks[storage.TaskKey{Env: ti.Env, Task: ti.Task.Task}] = ti.Stats
				return nil
			})
		})
		if err != nil {
			b.Fatal(err)
		}
		if c.Rollouts != bigRollouts || len(tasks) != bigEnvs*bigTasks {
			b.Fatalf("%d rollouts, %d tasks; want %d and %d", c.Rollouts, len(tasks), bigRollouts, bigEnvs*bigTasks)
		}
		db.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/open")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkFirstCommit10M is the first commit after opening the 10M database: it loads the
// dedupe index of every rollout id, once per process.
func BenchmarkFirstCommit10M(b *testing.B) {
	path := bigDB(b)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cp := filepath.Join(b.TempDir(), "copy.db")
		copyFile(b, path, cp)
		b.StartTimer()
		db, err := storage.Open(cp, storage.Options{})
		if err != nil {
			b.Fatal(err)
		}
		res, err := db.Commit(&storage.Batch{Rollouts: []storage.Rollout{{Rollout: record.Rollout{Env: "env-0", Task: "task-0",
			Reward: 1, RolloutID: bigID(5)}}}})
		if err != nil || res.Duplicates != 1 {
			b.Fatalf("first commit: %+v %v; want the rollout id found", res, err)
		}
		db.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/commit")
	b.ReportMetric(0, "ns/op")
}

func copyFile(b *testing.B, from, to string) {
	data, err := os.ReadFile(from)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		b.Fatal(err)
	}
}

// bigID is the rollout id of the n-th rollout of the big database: random-looking, as uuids are.
func bigID(n int) string {
	h := uint64(n) + 1
	h *= 0x9e3779b97f4a7c15
	return fmt.Sprintf("%016x", h)
}
