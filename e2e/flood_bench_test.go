package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkBadRequestFlood writes N bad requests (ENVSCHED_FLOOD, default 5000; each refused
// with an error file), then one good request, into a running daemon's requests folder, and
// measures how long the good request waits for its answer (good-ms, from its write) and how long
// until every bad request has its error file (errors-ms, from the first write). One daemon per
// iteration: run with -benchtime Nx for N runs.
func BenchmarkBadRequestFlood(b *testing.B) {
	n := 5000
	if s := os.Getenv("ENVSCHED_FLOOD"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	var good, all []float64
	for range b.N {
		g, a := floodOnce(b, n)
		good, all = append(good, g), append(all, a)
	}
	b.ReportMetric(quantile(good, 0), "min-good-ms")
	b.ReportMetric(quantile(good, 0.5), "median-good-ms")
	b.ReportMetric(quantile(all, 0), "min-errors-ms")
	b.ReportMetric(quantile(all, 0.5), "median-errors-ms")
	b.ReportMetric(0, "ns/op")
}

func floodOnce(b *testing.B, n int) (goodMs, allMs float64) {
	dir := b.TempDir()
	ensureCatalog(b, dir)
	d := startBench(b, dir, []string{"--log-level", "warn", "--log-format", "json"})
	begin := time.Now()
	for i := range n {
		must(b, tryWriteRequest(dir, fmt.Sprint("bad-", i), `{"size": -1}`))
	}
	wrote := time.Now()
	must(b, tryWriteRequest(dir, "good", `{"size": 2}`))
	waitVisible(b, d, filepath.Join(dir, "batches", "good.json"))
	goodMs = ms(time.Since(wrote))
	for i := range n {
		waitVisible(b, d, filepath.Join(dir, "batches", fmt.Sprint("bad-", i, ".error.json")))
	}
	allMs = ms(time.Since(begin))
	d.cmd.Process.Signal(syscall.SIGTERM)
	<-d.done
	return goodMs, allMs
}
