package schedule

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/graph/graphtest"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
)

// hotDB is a database shaped like bench/scalebench's: n catalogue tasks over 20 environments
// (graphtest.Random's nodes and about 10 edges a task, stored), each with 10 to 20 words of a
// 4,000-word Zipf vocabulary and 1 to 3 tools of 15 per environment; half the tasks, at random,
// with one group of 8 rollouts at a step from 1 to 40 whose success rate follows the task's
// first three words. The feature prior is on (the default parameters).
func hotDB(b *testing.B, n int) (*storage.DB, *graph.Graph) {
	b.Helper()
	g := graphtest.Random(n, 20, 10, 1)
	db, err := storage.Open(filepath.Join(b.TempDir(), "envsched.db"), storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	zipf := rand.NewZipf(rng, 1.1, 3, 3999)
	effect := make([]float64, 4000)
	for i := range effect {
		effect[i] = rng.NormFloat64() * 0.8
	}
	const chunk = 20000
	for lo := 0; lo < n; lo += chunk {
		var bt storage.Batch
		for i := lo; i < min(n, lo+chunk); i++ {
			nd := g.Nodes[i]
			env := g.Envs[nd.Env]
			words, logit := make([]string, 0, 20), 0.0
			for k := range 10 + rng.IntN(11) {
				w := zipf.Uint64()
				if k < 3 {
					logit += effect[w]
				}
				words = append(words, "w"+strconv.FormatUint(w, 36))
			}
			tools := make([]string, 1+rng.IntN(3))
			for k := range tools {
				tools[k] = fmt.Sprintf("%s_tool%d", env, rng.IntN(15))
			}
			bt.Tasks = append(bt.Tasks, record.Task{Env: env, Task: nd.Task, Text: strings.Join(words, " "), Tools: tools})
			ne := storage.NodeEdges{Node: storage.TaskKey{Env: env, Task: nd.Task}}
			for _, e := range g.Neighbors(i) {
				to := g.Nodes[e.To]
				ne.Edges = append(ne.Edges, storage.Edge{Env: g.Envs[to.Env], Task: to.Task, Weight: e.Weight, Sim: e.Sim, Cross: e.Cross})
			}
			bt.Edges = append(bt.Edges, ne)
			if rng.IntN(2) == 0 {
				continue
			}
			p, step := 1/(1+math.Exp(-logit)), int64(1+rng.IntN(40))
			for range 8 {
				bt.Rollouts = append(bt.Rollouts, storage.Rollout{Rollout: record.Rollout{Env: env, Task: nd.Task,
					Reward: bernoulli01(rng, p), Step: step, HasStep: true, Group: "h" + nd.Task}})
			}
		}
		if _, err := db.Commit(&bt); err != nil {
			b.Fatal(err)
		}
	}
	return db, g
}

func bernoulli01(rng *rand.Rand, p float64) float64 {
	if rng.Float64() < p {
		return 1
	}
	return 0
}

// BenchmarkHotPath is the daemon's request loop on a catalogue with text (the feature
// prior on, stored edges, one hop): the Scheduler is reused, and before each request (not
// timed) the rollouts of the previous answer arrive, 8 for each of its 512 tasks, one commit,
// as a trainer would write them. It reports the wall and CPU milliseconds of Scheduler.Answer
// and the feature prior's conjugate-gradient iterations, and the KiB it passed to write calls
// (the answer's commit). HOTPATH_N sets the sizes
// (comma-separated; default 10000,100000), HOTPATH_PRIOR_REFIT the feature prior's refit
// share (propagate.Params.PriorRefit; default the package's), HOTPATH_ROLLOUTS=0 no rollouts
// between the requests (as bench/scalebench's batches come).
func BenchmarkHotPath(b *testing.B) {
	sizes := []int{10_000, 100_000}
	if s := os.Getenv("HOTPATH_N"); s != "" {
		sizes = sizes[:0]
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				b.Fatal(err)
			}
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		db, _ := hotDB(b, n)
		var err error
		clock := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
		opts := Options{Size: 512, Now: func() time.Time { return clock }}
		if v := os.Getenv("HOTPATH_PRIOR_REFIT"); v != "" { // --prior-refit
			p := propagate.DefaultParams()
			if p.PriorRefit, err = strconv.ParseFloat(v, 64); err != nil {
				b.Fatal(err)
			}
			p.Decay = db.Config().Decay
			opts.Predict = &p
		}
		s, err := New(db, opts)
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(7, 7))
		digest, answers := sha256.New(), sha256.New()
		var last Answer
		k := 0
		var data []byte
		request := func() {
			k++
			var err error
			if data, err = s.Answer(fmt.Sprintf("b-%d", k), nil); err != nil {
				b.Fatal(err)
			}
		}
		answered := func() {
			digest.Write(data)
			answers.Write(data)
			state, err := db.PredictorState()
			if err != nil {
				b.Fatal(err)
			}
			digest.Write(state)
			last = Answer{}
			if err := json.Unmarshal(data, &last); err != nil {
				b.Fatal(err)
			}
		}
		quiet := os.Getenv("HOTPATH_ROLLOUTS") == "0" // requests back to back, as scalebench's batches
		request()                                     // the first load and a cold fit, not timed
		answered()
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var cpu, iters, written float64
			for b.Loop() {
				b.StopTimer()
				var bt storage.Batch
				for _, t := range last.Tasks {
					for r := range 8 {
						bt.Rollouts = append(bt.Rollouts, storage.Rollout{Rollout: record.Rollout{Env: t.Env, Task: t.TaskID,
							Reward: bernoulli01(rng, t.PredictedMean), Step: last.Step, HasStep: true,
							Group: fmt.Sprintf("%s-%d", last.ID, t.Rank), RolloutID: fmt.Sprintf("%s-%d-%d", last.ID, t.Rank, r)}})
					}
				}
				if quiet {
					bt.Rollouts = nil
				}
				if _, err := db.Commit(&bt); err != nil {
					b.Fatal(err)
				}
				cpu0, w0 := cpuTime(), writtenBytes()
				b.StartTimer()
				request()
				b.StopTimer()
				cpu += float64((cpuTime() - cpu0).Microseconds()) / 1000
				written += writtenBytes() - w0
				answered()
				iters += float64(s.pred.FitIterations())
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/request")
			b.ReportMetric(cpu/float64(b.N), "cpu-ms/request")
			b.ReportMetric(iters/float64(b.N), "iters/request")
			b.ReportMetric(written/1024/float64(b.N), "written-KiB/request")
		})
		s.Close()
		// HOTPATH_DIGEST names a file to which the digests of every answer and stored predictor
		// state, and of the answers alone, are appended: two trees that answer the same give
		// the same line.
		if p := os.Getenv("HOTPATH_DIGEST"); p != "" {
			f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(f, "N=%d answers=%d answers and states %x, answers %x\n", n, k, digest.Sum(nil), answers.Sum(nil))
			f.Close()
		}
	}
}
