package graph_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/graph/graphtest"
	"github.com/envsched/envsched/record"
)

// realCatalog is the real catalogue in the folder ../shared/data beside the repository (the
// benchmarks run in graph/, one level down), used by benchmarks when present.
var realCatalog = filepath.Join("..", "..", "shared", "data", "catalog-real.jsonl")

func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		tasks := graphtest.Catalog(n, n/2000, 1)
		b.Run(fmt.Sprintf("synthetic/n=%dk", n/1000), func(b *testing.B) {
			var g *graph.Graph
			cpu := cpuTime()
			for b.Loop() {
				bl := graph.NewBuilder(graph.Options{})
				bl.Add(tasks)
				g = bl.Snapshot()
			}
			reportCPU(b, cpu)
			reportGraph(b, g)
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
		})
	}
}

// cpuTime is the CPU time, user and system, of the process so far: on a shared machine it is
// steadier than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, since time.Duration) {
	b.ReportMetric((cpuTime()-since).Seconds()/float64(b.N), "cpu-s/op")
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

// BenchmarkAddIncremental adds 1k new tasks at a time to a graph of 100k built in one Add:
// each iteration adds the next 1k (no full rebuild happens within 25k added tasks). Run it
// with a fixed -benchtime such as 5x: every run of the function builds the 100k base first.
func BenchmarkAddIncremental(b *testing.B) {
	const base, extra = 100_000, 1_000
	tasks := graphtest.Catalog(base+extra*max(b.N, 1), 50, 2)
	bl := graph.NewBuilder(graph.Options{})
	bl.Add(tasks[:base])
	changed := 0
	b.ResetTimer()
	cpu := cpuTime()
	for i := range b.N {
		changed += len(bl.Add(tasks[base+i*extra : base+(i+1)*extra]))
	}
	reportCPU(b, cpu)
	b.ReportMetric(float64(changed)/float64(b.N), "changed-nodes/op")
	b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/add")
}

func BenchmarkBuildReal(b *testing.B) {
	tasks := readCatalog(b, realCatalog)
	var g *graph.Graph
	cpu := cpuTime()
	for b.Loop() {
		bl := graph.NewBuilder(graph.Options{})
		bl.Add(tasks)
		g = bl.Snapshot()
	}
	reportCPU(b, cpu)
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
