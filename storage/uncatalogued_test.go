package storage_test

import (
	"slices"
	"testing"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// TestUncataloguedTasksNameTheCatalogued: a commit's tasks first seen in rollouts of a database
// with a catalogue are listed, each with the catalogued task its names read as (its id's case,
// its environment's case, an NFD twin, a space at the end), none for a task that reads as no
// catalogued one or as two; tasks with a row (in an earlier commit or the same one) are not
// listed, and a database without a catalogue lists nothing.
func TestUncataloguedTasksNameTheCatalogued(t *testing.T) {
	bare := storagetest.Open(t)
	if res := commit(t, bare, &storage.Batch{Rollouts: []storage.Rollout{rollout("retail", "T1", 1, 1, "g", "r0")}}); res.Uncatalogued != nil {
		t.Errorf("no catalogue: Uncatalogued %v, want none", res.Uncatalogued)
	}

	db := storagetest.Open(t)
	commit(t, db, &storage.Batch{Tasks: []record.Task{
		{Env: "retail", Task: "t1", Text: "return an order"}, {Env: "retail", Task: "caf\u00e9"},
		{Env: "airline", Task: "book"}, {Env: "airline", Task: "x"}, {Env: "airline", Task: "X "},
	}})
	rows := []record.Task{{Env: "airline", Task: "late"}} // its row comes in the same commit
	var rs []storage.Rollout
	for i, k := range [][2]string{
		{"retail", "T1"}, {"Retail", "t1"}, {"RETAIL", "Book"}, {"airline", "X"}, {"retail", "cafe\u0301"},
		{"retail", "t1 "}, {"retail", "t9"}, {"retail", "t1"}, {"airline", "late"},
	} {
		rs = append(rs, rollout(k[0], k[1], 1, 1, "g", "id"+string(rune('a'+i))))
	}
	res := commit(t, db, &storage.Batch{Tasks: rows, Rollouts: rs})
	want := []storage.Uncatalogued{
		{Task: storage.TaskKey{Env: "retail", Task: "T1"}, Like: storage.TaskKey{Env: "retail", Task: "t1"}},
		{Task: storage.TaskKey{Env: "Retail", Task: "t1"}, Like: storage.TaskKey{Env: "retail", Task: "t1"}},
		{Task: storage.TaskKey{Env: "RETAIL", Task: "Book"}}, // "retail" has no "book"; airline's is another env
		{Task: storage.TaskKey{Env: "airline", Task: "X"}},   // reads as "x" and as "X ": two candidates
		{Task: storage.TaskKey{Env: "retail", Task: "cafe\u0301"}},
		{Task: storage.TaskKey{Env: "retail", Task: "t1 "}},
		{Task: storage.TaskKey{Env: "retail", Task: "t9"}},
	}
	// Only the first MaxLikeSearches are looked for: the later ones come without Like.
	if storage.MaxLikeSearches != 4 {
		t.Fatalf("the test expects MaxLikeSearches 4, it is %d", storage.MaxLikeSearches)
	}
	if !slices.Equal(res.Uncatalogued, want) {
		t.Errorf("Uncatalogued\n got %q\nwant %q", res.Uncatalogued, want)
	}

	// The same look-alikes early in a commit are found.
	res = commit(t, db, &storage.Batch{Rollouts: []storage.Rollout{
		rollout("retail", "cafe\u0301", 1, 1, "g", "n1"), // known now (added above): not listed
		rollout("retail", "CAF\u00c9", 1, 1, "g", "n2"),  // reads as café and as cafe\u0301, now a task: only café is catalogued
		rollout("retail", "t1  ", 1, 1, "g", "n3"),
	}})
	want = []storage.Uncatalogued{
		{Task: storage.TaskKey{Env: "retail", Task: "CAF\u00c9"}, Like: storage.TaskKey{Env: "retail", Task: "caf\u00e9"}},
		{Task: storage.TaskKey{Env: "retail", Task: "t1  "}, Like: storage.TaskKey{Env: "retail", Task: "t1"}},
	}
	if !slices.Equal(res.Uncatalogued, want) {
		t.Errorf("second commit: Uncatalogued\n got %q\nwant %q", res.Uncatalogued, want)
	}
}
