package graph_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/graph/graphtest"
	"github.com/envsched/envsched/record"
)

// realCatalog is the real catalogue of ../shared/data, used by benchmarks when present.
const realCatalog = "/work/shared/data/catalog-real.jsonl"

func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		tasks := graphtest.Catalog(n, n/2000, 1)
		b.Run(fmt.Sprintf("synthetic/n=%dk", n/1000), func(b *testing.B) {
			var g *graph.Graph
			for b.Loop() {
				bl := graph.NewBuilder(graph.Options{})
				bl.Add(tasks)
				g = bl.Snapshot()
			}
			reportGraph(b, g)
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
		})
	}
}

func reportGraph(b *testing.B, g *graph.Graph) {
	cross := 0
	for i := range g.Len() {
		for _, e := range g.Neighbors(i) {
			if e.Cross {
				cross++
			}
		}
	}
	b.ReportMetric(float64(g.NumEdges())/2, "edges")
	b.ReportMetric(float64(cross)/2, "cross-edges")
	b.ReportMetric(float64(g.NumEdges())/float64(max(g.Len(), 1)), "degree")
}

// BenchmarkAddIncremental adds 1k new tasks to a graph of 100k (no full rebuild).
func BenchmarkAddIncremental(b *testing.B) {
	const base, extra = 100_000, 1_000
	tasks := graphtest.Catalog(base+extra, 50, 2)
	bl := graph.NewBuilder(graph.Options{})
	bl.Add(tasks[:base])
	b.ResetTimer()
	var changed int
	for b.Loop() {
		b.StopTimer()
		c := cloneBuilderState(b, bl, tasks[:base])
		b.StartTimer()
		changed = len(c.Add(tasks[base:]))
	}
	b.ReportMetric(float64(changed), "changed-nodes")
	b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/add")
}

// cloneBuilderState returns a builder in the state of bl; the builder has no copy method, so it
// is rebuilt (outside the timer) from the same tasks.
func cloneBuilderState(b *testing.B, bl *graph.Builder, tasks []record.Task) *graph.Builder {
	b.Helper()
	c := graph.NewBuilder(bl.Options())
	c.Add(tasks)
	return c
}

func BenchmarkBuildReal(b *testing.B) {
	tasks := readCatalog(b, realCatalog)
	var g *graph.Graph
	start := time.Now()
	for b.Loop() {
		bl := graph.NewBuilder(graph.Options{})
		bl.Add(tasks)
		g = bl.Snapshot()
	}
	_ = start
	reportGraph(b, g)
	shared, cross := crossSharingTool(g, tasks)
	b.ReportMetric(float64(shared), "cross-sharing-tool")
	if cross > 0 {
		b.ReportMetric(float64(shared)/float64(cross), "cross-share-tool-frac")
	}
}

// crossSharingTool counts undirected cross-environment edges whose tasks share a tool name.
func crossSharingTool(g *graph.Graph, tasks []record.Task) (shared, cross int) {
	tools := map[graph.NodeKey]map[string]bool{}
	for _, t := range tasks {
		s := map[string]bool{}
		for _, x := range t.Tools {
			s[x] = true
		}
		tools[graph.NodeKey{Env: t.Env, Task: t.Task}] = s
	}
	key := func(i int) graph.NodeKey { return graph.NodeKey{Env: g.Envs[g.Nodes[i].Env], Task: g.Nodes[i].Task} }
	for i := range g.Len() {
		for _, e := range g.Neighbors(i) {
			if !e.Cross || int(e.To) < i {
				continue
			}
			cross++
			for x := range tools[key(i)] {
				if tools[key(int(e.To))][x] {
					shared++
					break
				}
			}
		}
	}
	return shared, cross
}

// readCatalog reads the catalogue format of ../shared/data/README.md (env, task_id, text,
// tools), skipping the benchmark when the file is absent.
func readCatalog(tb testing.TB, path string) []record.Task {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Skipf("real catalogue not present: %v", err)
	}
	defer f.Close()
	var tasks []record.Task
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var row struct {
			Env   string   `json:"env"`
			Task  string   `json:"task_id"`
			Text  string   `json:"text"`
			Tools []string `json:"tools"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			tb.Fatalf("read %s: %v", path, err)
		}
		tasks = append(tasks, record.Task{Env: row.Env, Task: row.Task, Text: row.Text, Tools: row.Tools})
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("read %s: %v", path, err)
	}
	return tasks
}
