package graph_test

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/graph/graphtest"
	"github.com/envsched/envsched/record"
)

// goldenEdges are the fingerprints of the graphs of goldenCases, recorded with the builder as it
// was before its index and queries were made compact (commit 090ed33, per-term posting slices and
// per-document structs). A rewrite of the builder's internals must give the same edges to the
// bit: the same neighbours, the same Sim and Weight bits, the same changed keys of every Add.
var goldenEdges = map[string]string{
	"one Add, defaults": "31f558a805704395cc16d16a",
	"one Add, MaxDF 40 (capped features, left-out norms)": "58cdc41cd9533c09e9d85a1d",
	"one Add, MaxDF 3 (docs with only capped features)":   "77514d772938ffb31e2ea335",
	"K 3, KCross 0, one worker":                           "f0b07236b960955640b7dc29",
	"embeddings on a third of the tasks":                  "3c6ea02d2b10f1abc708afad",
	"incremental Adds, replaced rows, an emptied task":    "67f70423fd0f70e57d152861",
}

// goldenCase is one catalogue and sequence of Adds.
type goldenCase struct {
	name string
	opt  graph.Options
	adds func() [][]record.Task
}

func goldenCases() []goldenCase {
	cat := func(n, envs int, seed int64) []record.Task { return graphtest.Catalog(n, envs, seed) }
	return []goldenCase{
		{"one Add, defaults", graph.Options{}, func() [][]record.Task { return [][]record.Task{cat(3000, 5, 1)} }},
		{"one Add, MaxDF 40 (capped features, left-out norms)", graph.Options{MaxDF: 40},
			func() [][]record.Task { return [][]record.Task{cat(2500, 4, 2)} }},
		{"one Add, MaxDF 3 (docs with only capped features)", graph.Options{MaxDF: 3, MinSim: 0.1, MinSimCross: 0.15},
			func() [][]record.Task { return [][]record.Task{cat(1500, 3, 3)} }},
		{"K 3, KCross 0, one worker", graph.Options{K: 3, KCross: -1, Workers: 1},
			func() [][]record.Task { return [][]record.Task{cat(2000, 4, 4)} }},
		{"embeddings on a third of the tasks", graph.Options{}, func() [][]record.Task {
			return [][]record.Task{withEmbeddings(cat(2000, 4, 5), 6)}
		}},
		{"incremental Adds, replaced rows, an emptied task", graph.Options{}, func() [][]record.Task {
			all := cat(2600, 5, 7)
			changed := replaced(all[:40], 8)
			changed = append(changed, record.Task{Env: all[41].Env, Task: all[41].Task})
			return [][]record.Task{all[:2000], all[2000:2300], all[2300:2320], changed, all[2320:]}
		}},
	}
}

// withEmbeddings gives every third task a random embedding of 8 dimensions.
func withEmbeddings(tasks []record.Task, seed uint64) []record.Task {
	rng := rand.New(rand.NewPCG(seed, 3))
	for i := range tasks {
		if i%3 == 0 {
			e := make([]float32, 8)
			for j := range e {
				e[j] = float32(rng.NormFloat64())
			}
			tasks[i].Embedding = e
		}
	}
	return tasks
}

// replaced returns the tasks with another text: the words of a task further down the list.
func replaced(tasks []record.Task, shift int) []record.Task {
	out := make([]record.Task, len(tasks))
	for i, t := range tasks {
		t.Text = tasks[(i+shift)%len(tasks)].Text + " changed"
		out[i] = t
	}
	return out
}

// fingerprint hashes a graph's nodes and edges and the changed keys of each Add.
func fingerprint(b *graph.Builder, changed [][]graph.NodeKey) string {
	h := sha256.New()
	put := func(s string) { fmt.Fprintf(h, "%d:%s", len(s), s) }
	num := func(x float32) { h.Write(binary.LittleEndian.AppendUint32(nil, math.Float32bits(x))) }
	for _, keys := range changed {
		put(fmt.Sprint(len(keys)))
		for _, k := range keys {
			put(k.Env)
			put(k.Task)
		}
	}
	for _, k := range b.Keys() {
		put(k.Env)
		put(k.Task)
		for _, e := range b.Adjacency(k) {
			put(e.Env)
			put(e.Task)
			num(e.Weight)
			num(e.Sim)
			put(fmt.Sprint(e.Cross))
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}

// TestEdgesEqualTheRecordedBuilder checks that the builder gives, to the bit, the edges the
// builder of commit 090ed33 gave on random catalogues (see goldenEdges).
func TestEdgesEqualTheRecordedBuilder(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			b := graph.NewBuilder(c.opt)
			var changed [][]graph.NodeKey
			for _, add := range c.adds() {
				changed = append(changed, b.Add(add))
			}
			got := fingerprint(b, changed)
			if want := goldenEdges[c.name]; got != want {
				t.Errorf("edges fingerprint %s, recorded %s", got, want)
			}
		})
	}
}

// TestGoldenCasesHaveEdges guards the fingerprints against cases that test nothing: every case
// makes edges, the capped cases cap, and the embedding case links tasks by embedding alone.
func TestGoldenCasesHaveEdges(t *testing.T) {
	for _, c := range goldenCases() {
		b := graph.NewBuilder(c.opt)
		for _, add := range c.adds() {
			b.Add(add)
		}
		g := b.Snapshot()
		if g.NumEdges() < g.Len() {
			t.Errorf("%s: %d edges over %d nodes", c.name, g.NumEdges(), g.Len())
		}
	}
}
