package schedule

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"testing"
	"time"

	"github.com/envsched/envsched/ingest"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/graph/graphtest"
	"github.com/envsched/envsched/storage"
)

// TestLeanMakeRestoresTheCollectorsTarget: the one-shot keeper's lists are those of listsOf, the
// collector's target is storeGCPercent while they are made, and the previous target is back once
// the last list is made.
func TestLeanMakeRestoresTheCollectorsTarget(t *testing.T) {
	b := graph.NewBuilder(graph.Options{})
	b.Add(graphtest.Catalog(300, 3, 2))
	keys := b.Keys()
	want := listsOf(b, keys)
	prev := debug.SetGCPercent(137)
	defer debug.SetGCPercent(prev)
	mk, _ := leanMake(b, keys)
	var got [][]storage.NodeEdges
	for i := 0; i < len(keys); i += 100 {
		got = append(got, mk(i, min(i+100, len(keys))))
		now := debug.SetGCPercent(137)
		debug.SetGCPercent(now)
		wantNow := storeGCPercent
		if i+100 >= len(keys) {
			wantNow = 137
		}
		if now != wantNow {
			t.Fatalf("after lists %d..: collector target %d, want %d", i, now, wantNow)
		}
	}
	var flat []storage.NodeEdges
	for _, g := range got {
		flat = append(flat, g...)
	}
	if !reflect.DeepEqual(flat, want) {
		t.Fatal("leanMake's lists differ from listsOf's")
	}
}

// TestOneShotIngestRestoresTheCollectorsTargetWhenStoringFails: a one-shot ingest (`envsched
// batch`, `envsched ingest`) whose edge commits fail midway (the database closed under it, as a
// failed write would end it) returns the error with the collector's target as it was before the
// scan: it used to stay at storeGCPercent for the rest of the process.
func TestOneShotIngestRestoresTheCollectorsTargetWhenStoringFails(t *testing.T) {
	dir := t.TempDir()
	var rows []byte
	for _, task := range graphtest.Catalog(300, 3, 2) {
		line, _ := json.Marshal(map[string]any{"env": task.Env, "task_id": task.Task, "text": task.Text})
		rows = append(append(rows, line...), '\n')
	}
	if err := os.MkdirAll(filepath.Join(dir, "catalog"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "catalog", "c.jsonl"), rows, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := storage.Open(filepath.Join(dir, "envsched.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	prev := debug.SetGCPercent(137)
	defer debug.SetGCPercent(prev)
	lowered := false
	closeWhenLowered := func() { // before each commit: the first edge commit after the target fell fails
		now := debug.SetGCPercent(137)
		debug.SetGCPercent(now)
		if now == storeGCPercent && !lowered {
			lowered = true
			db.Close()
		}
	}
	in, err := NewOneShotIngester(db, dir, ingest.Options{MaxRecords: 10, MaxDelay: time.Hour, BeforeCommit: closeWhenLowered})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Scan(context.Background()); err == nil {
		t.Fatal("scan of a closed database succeeded")
	}
	if !lowered {
		t.Fatal("no commit ran with the target lowered: the test did not reach the edge commits")
	}
	now := debug.SetGCPercent(137)
	if now != 137 {
		t.Errorf("collector target %d after the failed scan, want 137 as before it", now)
	}
}
