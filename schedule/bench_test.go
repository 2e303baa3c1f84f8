package schedule

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
)

// benchDB is a database of n tasks over 20 environments; a third have 8 rollouts. It stores
// no edges (the graph is then environment priors only: the cost measured is storage's).
func benchDB(b *testing.B, n int) *storage.DB {
	b.Helper()
	db, err := storage.Open(filepath.Join(b.TempDir(), "envsched.db"), storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	const chunk = 20000
	for lo := 0; lo < n; lo += chunk {
		var bt storage.Batch
		for i := lo; i < min(n, lo+chunk); i++ {
			env, task := fmt.Sprintf("env-%02d", i%20), fmt.Sprintf("task-%07d", i)
			bt.Tasks = append(bt.Tasks, record.Task{Env: env, Task: task})
			if i%3 == 0 {
				for r := range 8 {
					bt.Rollouts = append(bt.Rollouts, storage.Rollout{Rollout: record.Rollout{Env: env, Task: task, Reward: float64((r + i) % 2), Step: 1, HasStep: true}})
				}
			}
		}
		if _, err := db.Commit(&bt); err != nil {
			b.Fatal(err)
		}
	}
	return db
}

// BenchmarkAnswer is one request of 512 answered through storage: reading every task's
// statistics, predicting, selecting, and storing the answer (one fsync'd transaction).
func BenchmarkAnswer(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		db := benchDB(b, n)
		s, err := New(db, Options{Size: 512})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime()
			k := 0
			for b.Loop() {
				k++
				if _, err := s.Answer(fmt.Sprintf("b-%d", k), nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/request")
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/request")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writtenBytes is what the process has passed to write calls so far (wchar of /proc/self/io:
// the database's page writes and the batch files), 0 where that file cannot be read.
func writtenBytes() float64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return n
		}
	}
	return 0
}
