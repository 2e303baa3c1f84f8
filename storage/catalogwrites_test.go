package storage_test

import (
	"testing"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// TestCatalogWritesCountsReworded: the counter moves when a known task's description changes,
// and only then (not for a new task, not for the same description again).
func TestCatalogWritesCountsReworded(t *testing.T) {
	db := storagetest.Open(t)
	counter := func() int64 {
		t.Helper()
		var c storage.Counters
		err := db.View(func(r *storage.Reader) error {
			var err error
			c, err = r.Counters()
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return c.CatalogWrites
	}
	steps := []struct {
		rows []record.Task
		want int64
	}{
		{[]record.Task{{Env: "e", Task: "a", Text: "book a flight"}, {Env: "e", Task: "b", Text: "cancel"}}, 0},
		{[]record.Task{{Env: "e", Task: "a", Text: "book a flight"}}, 0},
		{[]record.Task{{Env: "e", Task: "a", Text: "book a train"}}, 1},
		{[]record.Task{{Env: "e", Task: "a", Text: "book a bus"}, {Env: "e", Task: "b", Text: "cancel", Tools: []string{"refund"}}}, 3},
	}
	for i, s := range steps {
		if _, err := db.Commit(&storage.Batch{Tasks: s.rows}); err != nil {
			t.Fatal(err)
		}
		if got := counter(); got != s.want {
			t.Errorf("commit %d: CatalogWrites %d, want %d", i+1, got, s.want)
		}
	}
}
