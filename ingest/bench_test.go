package ingest

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/envsched/envsched/bench/benchdata"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
)

// BenchmarkIngest measures ingestion of compact and verl-like rollout lines with fsync'd
// commits (a fresh database per iteration), side by side with the parse-only floor and, when
// ../shared/bench/py_ingest.py is there, the Python+SQLite peer on the same files:
//
//	go test ./ingest -run '^$' -bench Ingest -benchtime 3x
func BenchmarkIngest(b *testing.B) {
	shapes := []struct {
		spec benchdata.Spec
	}{
		{benchdata.Spec{Shape: benchdata.Compact, Lines: 1_000_000, Files: 4, Seed: 1}},
		{benchdata.Spec{Shape: benchdata.Verl, Lines: 50_000, Files: 4, Seed: 1}},
	}
	for _, sh := range shapes {
		dir := b.TempDir()
		size, err := benchdata.Write(dir, sh.spec)
		if err != nil {
			b.Fatal(err)
		}
		lines := sh.spec.Lines
		b.Run(string(sh.spec.Shape)+"/envsched", func(b *testing.B) { benchEnvsched(b, dir, lines, size) })
		b.Run(string(sh.spec.Shape)+"/parse-only", func(b *testing.B) { benchParse(b, dir, lines, size) })
		b.Run(string(sh.spec.Shape)+"/py-peer", func(b *testing.B) { benchPeer(b, dir) })
	}
}

func report(b *testing.B, lines int, size int64) {
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(lines)/sec, "records/s")
	b.ReportMetric(float64(size)/sec/1e6, "MB/s")
	b.ReportMetric(0, "ns/op")
}

func benchEnvsched(b *testing.B, dir string, lines int, size int64) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dbPath := filepath.Join(b.TempDir(), "envsched.db")
		b.StartTimer()
		db, err := storage.Open(dbPath, storage.Options{})
		if err != nil {
			b.Fatal(err)
		}
		in, err := New(db, dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		s, err := in.Scan(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		if s.Rollouts != lines {
			b.Fatalf("stored %d rollouts, want %d", s.Rollouts, lines)
		}
	}
	report(b, lines, size)
}

func benchParse(b *testing.B, dir string, lines int, size int64) {
	for i := 0; i < b.N; i++ {
		n := 0
		paths, _ := filepath.Glob(filepath.Join(dir, "rollouts", "*.jsonl"))
		for _, p := range paths {
			n += parseFile(b, p)
		}
		if n != lines {
			b.Fatalf("parsed %d, want %d", n, lines)
		}
	}
	report(b, lines, size)
}

func parseFile(b *testing.B, p string) int {
	f, err := os.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		if _, err := record.ParseRollout(line); err == nil {
			n++
		}
	}
}

var peerOut = regexp.MustCompile(`([\d,]+) rec/s, ([\d.]+) MB/s`)

// benchPeer runs ../shared/bench/py_ingest.py on the same files and reports the figures it
// prints (its own timing of its ingest loop).
func benchPeer(b *testing.B, dir string) {
	script := filepath.Join("..", "..", "shared", "bench", "py_ingest.py")
	if _, err := os.Stat(script); err != nil {
		b.Skip("peer not available: ", script)
	}
	var recs, mbs float64
	for i := 0; i < b.N; i++ {
		out, err := exec.Command("python3", script, dir, filepath.Join(b.TempDir(), "py.db")).CombinedOutput()
		m := peerOut.FindSubmatch(out)
		if err != nil || m == nil {
			b.Fatalf("peer: %v: %s", err, out)
		}
		r, _ := strconv.ParseFloat(strings.ReplaceAll(string(m[1]), ",", ""), 64)
		mb, _ := strconv.ParseFloat(string(m[2]), 64)
		recs, mbs = recs+r, mbs+mb
	}
	b.ReportMetric(recs/float64(b.N), "records/s")
	b.ReportMetric(mbs/float64(b.N), "MB/s")
	b.ReportMetric(0, "ns/op")
}
