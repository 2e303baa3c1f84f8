package storage_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

func mustState(t *testing.T, db *storage.DB) []byte {
	t.Helper()
	state, err := db.PredictorState()
	if err != nil {
		t.Fatal(err)
	}
	return state
}

// TestPredictorStateSurvivesAReopen stores answers without and with a predictor state, as a
// database written before predictor states existed and one written after, and reopens.
func TestPredictorStateSurvivesAReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db := openAt(t, path, storage.Options{})
	commit(t, db, &storage.Batch{Tasks: []record.Task{{Env: "e", Task: "t"}}})
	chosen := []storage.TaskKey{{Env: "e", Task: "t"}}
	if err := db.StoreAnswer("r1", 1, []byte("a1"), chosen, nil); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = openAt(t, path, storage.Options{})
	if state := mustState(t, db); state != nil {
		t.Fatalf("no state was ever stored, yet it reads %q; want nil", state)
	}
	if err := db.StoreAnswer("r2", 2, []byte("a2"), chosen, []byte(`{"drift":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := db.StoreAnswer("r3", 3, []byte("a3"), chosen, nil); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = openAt(t, path, storage.Options{})
	defer db.Close()
	if state := mustState(t, db); string(state) != `{"drift":1}` {
		t.Errorf("after a reopen the state is %q; want the one stored with r2 (r3 stored none)", state)
	}
	if err := db.StoreAnswer("r4", 4, []byte("a4"), chosen, []byte(`{"drift":2}`)); err != nil {
		t.Fatal(err)
	}
	if state := mustState(t, db); string(state) != `{"drift":2}` {
		t.Errorf("state %q; want the one stored with r4", state)
	}
	storagetest.MustCheck(t, db, "")
}

// TestPredictorStateIsAllOrNothing checks that an answer that is not stored leaves the state.
func TestPredictorStateIsAllOrNothing(t *testing.T) {
	db := storagetest.Open(t)
	commit(t, db, &storage.Batch{Tasks: []record.Task{{Env: "e", Task: "t"}}})
	if err := db.StoreAnswer("r", 1, []byte("x"), nil, []byte("s1")); err != nil {
		t.Fatal(err)
	}
	err := db.StoreAnswer("r2", 2, []byte("y"), []storage.TaskKey{{Env: "e", Task: "missing"}}, []byte("s2"))
	if !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("answer choosing an unknown task: %v", err)
	}
	if err := db.StoreAnswer("r", 3, []byte("z"), nil, []byte("s3")); err == nil {
		t.Fatal("an answer was stored twice under one id")
	}
	if state := mustState(t, db); string(state) != "s1" {
		t.Errorf("state %q after two refused answers; want s1", state)
	}
}
