// Command ingestbench is the helper of bench/ingest.sh: it writes the benchmark's rollout files
// and measures the parse-only floor (the record parser over the same lines, no database).
//
//	ingestbench gen -shape compact|verl -lines N [-files F] DIR
//	ingestbench parse DIR
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/envsched/envsched/bench/benchdata"
	"github.com/envsched/envsched/record"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ingestbench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 1 {
		return errors.New("usage: ingestbench gen|parse ...")
	}
	switch args[0] {
	case "gen":
		return gen(args[1:])
	case "parse":
		if len(args) != 2 {
			return errors.New("usage: ingestbench parse DIR")
		}
		return parse(args[1])
	}
	return fmt.Errorf("unknown command %q", args[0])
}

func gen(args []string) error {
	fl := flag.NewFlagSet("gen", flag.ContinueOnError)
	shape := fl.String("shape", "compact", "compact or verl")
	lines := fl.Int("lines", 1_000_000, "lines to write")
	files := fl.Int("files", 4, "files to spread them over")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() != 1 {
		return errors.New("usage: ingestbench gen [flags] DIR")
	}
	n, err := benchdata.Write(fl.Arg(0), benchdata.Spec{Shape: benchdata.Shape(*shape), Lines: *lines, Files: *files, Seed: 1})
	if err != nil {
		return err
	}
	fmt.Printf("wrote %d %s lines, %.1f MB, %.0f bytes per line\n", *lines, *shape, float64(n)/1e6, float64(n)/float64(*lines))
	return nil
}

// parse reads every rollout file with the record parser, as ingest does, without storing.
func parse(dir string) error {
	start := time.Now()
	var recs, bytes int64
	err := filepath.WalkDir(filepath.Join(dir, "rollouts"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		n, b, err := parseFile(p)
		recs, bytes = recs+n, bytes+b
		return err
	})
	if err != nil {
		return err
	}
	dt := time.Since(start).Seconds()
	fmt.Printf("%d records in %.2fs: %.0f rec/s, %.1f MB/s\n", recs, dt, float64(recs)/dt, float64(bytes)/dt/1e6)
	return nil
}

func parseFile(p string) (recs, bytes int64, err error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, io.EOF) {
			return recs, bytes, nil
		}
		if err != nil {
			return recs, bytes, err
		}
		bytes += int64(len(line))
		if _, perr := record.ParseRollout(line); perr == nil {
			recs++
		}
	}
}
