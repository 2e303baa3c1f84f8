package storage

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/envsched/envsched/record"
)

// BenchmarkCheckpoint100k times the commit that folds a full task log (checkpointBytes) into
// the tasks of a 100k catalogue (20 environments), the log filled as a daemon fills it: commits
// of 512 tasks drawn at random, a rollout each. One op is one checkpoint, its wall time
// ms/checkpoint; the commits between are reported apart (commit-ms, their mean), the build of
// the database not at all.
//
//	go test ./storage -run '^$' -bench Checkpoint100k -benchtime 5x
func BenchmarkCheckpoint100k(b *testing.B) {
	const envs, perEnv, chosen = 20, 5000, 512
	db, err := Open(filepath.Join(b.TempDir(), "c.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	name := func(i int) (string, string) { return fmt.Sprint("env-", i%envs), fmt.Sprintf("task-%06d", i/envs) }
	step := int64(0)
	commit := func(idx []int) {
		step++
		var batch Batch
		for _, i := range idx {
			env, task := name(i)
			batch.Rollouts = append(batch.Rollouts, Rollout{Rollout: record.Rollout{Env: env, Task: task,
				Reward: float64(i % 2), Step: step, HasStep: true}})
		}
		if _, err := db.Commit(&batch); err != nil {
			b.Fatal(err)
		}
	}
	all := make([]int, envs*perEnv)
	for i := range all {
		all[i] = i
	}
	for i := 0; i < len(all); i += 5000 {
		commit(all[i : i+5000])
	}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := make([]int, chosen)
	var between, folding time.Duration
	commits, pages := 0, int64(0)
	b.ResetTimer()
	for range b.N {
		for {
			for j := range pick {
				pick[j] = rng.IntN(len(all))
			}
			db.tasks.mu.Lock()
			before := db.tasks.size
			db.tasks.mu.Unlock()
			st := db.bolt.Stats()
			w0 := st.TxStats.GetWrite()
			start := time.Now()
			commit(pick)
			took := time.Since(start)
			db.tasks.mu.Lock()
			after := db.tasks.size
			db.tasks.mu.Unlock()
			if after < before { // this commit checkpointed
				st = db.bolt.Stats()
				pages += st.TxStats.GetWrite() - w0
				folding += took
				break
			}
			between += took
			commits++
		}
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(folding.Microseconds())/1000/float64(b.N), "ms/checkpoint")
	b.ReportMetric(float64(pages)/float64(b.N), "pages/checkpoint")
	if commits > 0 {
		b.ReportMetric(float64(between.Microseconds())/1000/float64(commits), "commit-ms")
		b.ReportMetric(float64(commits)/float64(b.N), "commits/checkpoint")
	}
}
