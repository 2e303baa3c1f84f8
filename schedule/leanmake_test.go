package schedule

import (
	"reflect"
	"runtime/debug"
	"testing"

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
	mk := leanMake(b, keys)
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
