package ingest

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/envsched/envsched/storage"
)

// TestLinkedIntoBothFoldersAtFirstSight (hostile15): a file that already has names in both
// catalog/ and rollouts/ (hard links) when envsched first sees it was tracked in walk order, as
// a catalogue file: a rollout file's lines were read as catalogue rows (each has env and task)
// and none of its rollouts ever counted, without a word (hostile14a: `rollouts 0` for 4
// lines). Its first complete line now decides: a rollout makes it a rollout file under its
// rollouts/ name, anything else a catalogue file under its catalog/ name; either way the
// choice is logged, and it stays so (appends, rescans, hinted passes, a restart). A file with
// no complete line yet waits for one. Each order in which the pass can meet the names is
// tried: a full scan, a hinted pass of the catalog/ name alone (then a full scan), and of both.
func TestLinkedIntoBothFoldersAtFirstSight(t *testing.T) {
	const rollouts = `{"env":"e","task":"1","reward":1}` + "\n" + `{"env":"e","task":"2","reward":0}` + "\n"
	const catalogue = `{"env":"e","task":"1","text":"one"}` + "\n" + `{"env":"e","task":"2","text":"two"}` + "\n"
	for _, tc := range []struct {
		name, content string
		kind          storage.FileKind
		lines         string // written after the first pass, for the empty case
	}{
		{"rollout file", rollouts, storage.KindRollouts, ""},
		{"catalogue file", catalogue, storage.KindCatalog, ""},
		{"rollout file empty at first", "", storage.KindRollouts, rollouts},
		{"rollout file after blank lines", "\n  \n" + rollouts, storage.KindRollouts, ""},
	} {
		for _, pass := range []string{"full", "catalog name hinted", "both hinted"} {
			t.Run(tc.name+"/"+pass, func(t *testing.T) {
				var log bytes.Buffer
				e := newEnv(t, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
				for _, d := range []string{"catalog", "rollouts"} {
					if err := os.MkdirAll(e.path(d), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				e.write("rollouts/x.jsonl", tc.content)
				if err := os.Link(e.path("rollouts/x.jsonl"), e.path("catalog/x.jsonl")); err != nil {
					t.Fatal(err)
				}
				first := func() {
					var err error
					switch pass {
					case "full":
						_, err = e.in.Scan(context.Background())
					case "catalog name hinted":
						_, err = e.in.ScanPaths(context.Background(), []string{e.path("catalog/x.jsonl")})
					case "both hinted":
						_, err = e.in.ScanPaths(context.Background(), []string{e.path("catalog/x.jsonl"), e.path("rollouts/x.jsonl")})
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				first()
				if tc.lines != "" {
					e.append("rollouts/x.jsonl", tc.lines)
					first()
				}
				e.scan()
				e.append("rollouts/x.jsonl", map[storage.FileKind]string{
					storage.KindRollouts: `{"env":"e","task":"3","reward":1}` + "\n",
					storage.KindCatalog:  `{"env":"e","task":"3","text":"three"}` + "\n"}[tc.kind])
				e.scan()
				e.reopen()
				e.scan()
				c := e.counters()
				wantRollouts := map[storage.FileKind]int64{storage.KindRollouts: 3}[tc.kind]
				if c.Rollouts != wantRollouts || c.Quarantined != 0 {
					t.Errorf("rollouts %d, quarantined %d; want %d and 0", c.Rollouts, c.Quarantined, wantRollouts)
				}
				files, err := e.db.Files()
				if err != nil {
					t.Fatal(err)
				}
				var live []string
				for _, f := range files {
					if !f.Gone {
						live = append(live, f.Path)
						if f.Kind != tc.kind {
							t.Errorf("tracked as kind %d under %s; want kind %d", f.Kind, f.Path, tc.kind)
						}
					}
				}
				if len(live) != 1 {
					t.Errorf("tracked files %v; want one", live)
				}
				if !strings.Contains(log.String(), "file named in both catalog/ and rollouts/") {
					t.Errorf("the choice was not logged:\n%s", log.String())
				}
			})
		}
	}
}
