package storage_test

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
)

// BenchmarkCommitAnsweredGroups is the ingest commit of one step's groups: a database of 20,000
// tasks over 20 environments answers a request of 512 tasks (group size 8), and the commit
// measured stores the 4096 rollouts that answer it (each naming its request and step), which
// closes the answer's 512 predictions in the calibration ledger. The answer is stored outside
// the timer. Compare with the code before the ledger: storeBenchAnswer then stores no
// predictions, and the commit measures nothing.
//
//	go test ./storage -run '^$' -bench CommitAnsweredGroups -count 3
func BenchmarkCommitAnsweredGroups(b *testing.B) {
	const tasks, size, group = 20_000, 512, 8
	db, err := storage.Open(filepath.Join(b.TempDir(), "envsched.db"), storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var cat storage.Batch
	for i := range tasks {
		cat.Tasks = append(cat.Tasks, record.Task{Env: fmt.Sprintf("env-%02d", i%20), Task: fmt.Sprintf("task-%06d", i)})
	}
	if _, err := db.Commit(&cat); err != nil {
		b.Fatal(err)
	}
	var batch storage.Batch
	step := int64(0)
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		step++
		id := fmt.Sprint("req-", step)
		chosen := make([]storage.TaskKey, size)
		batch.Reset()
		for k := range chosen {
			i := (int(step)*size + k) * 7919 % tasks
			chosen[k] = storage.TaskKey{Env: fmt.Sprintf("env-%02d", i%20), Task: fmt.Sprintf("task-%06d", i)}
			for j := range group {
				batch.Rollouts = append(batch.Rollouts, storage.Rollout{Rollout: record.Rollout{Env: chosen[k].Env,
					Task: chosen[k].Task, Reward: float64((j + k) % 2), Step: step, HasStep: true, RequestID: id,
					RolloutID: fmt.Sprintf("%s-%d-%d", id, k, j)}})
			}
		}
		if err := storeBenchAnswer(db, id, step, chosen, group); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cpu0 := cpuTime()
		if _, err := db.Commit(&batch); err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - cpu0
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/commit")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/commit")
	b.ReportMetric(float64(size*group*b.N)/b.Elapsed().Seconds(), "rollouts/s")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
