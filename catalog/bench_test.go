package catalog_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/envsched/envsched/catalog"
)

// BenchmarkCheck reads the same verl-shaped catalogue as parquet and as JSON lines, side by side:
// rows/s is the figure that matters (a catalogue is read whole at start and on every change).
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		dir := b.TempDir()
		rows := verlRows(n)
		pq := filepath.Join(dir, "c.parquet")
		var buf bytes.Buffer
		if err := writeRows(&buf, rows); err != nil {
			b.Fatal(err)
		}
		os.WriteFile(pq, buf.Bytes(), 0o644)
		jl := filepath.Join(dir, "c.jsonl")
		os.WriteFile(jl, jsonLines(b, rows), 0o644)
		for _, path := range []string{pq, jl} {
			b.Run(fmt.Sprintf("%s/rows=%d", catalog.FormatOf(path), n), func(b *testing.B) {
				for range b.N {
					rep, err := catalog.Check(path)
					if err != nil || len(rep.Rows) != n {
						b.Fatalf("check: %v", err)
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}

func jsonLines(b *testing.B, rows []verlRow) []byte {
	var out []byte
	for _, r := range rows {
		line, err := json.Marshal(map[string]any{
			"data_source": *r.DataSource, "prompt": r.Prompt, "ability": r.Ability,
			"reward_model": map[string]any{"ground_truth": r.RewardModel.GroundTruth, "style": r.RewardModel.Style},
			"extra_info":   map[string]any{"index": *r.ExtraInfo.Index, "split": r.ExtraInfo.Split},
		})
		if err != nil {
			b.Fatal(err)
		}
		out = append(append(out, line...), '\n')
	}
	return out
}
