package schedule

import (
	"bytes"
	"errors"
	"testing"

	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// AnswerEarly hands over a new answer's bytes once, before they are stored, and the same
// bytes come back; an answer stored before and a bad request hand over nothing.
func TestAnswerEarlyHandsOverBeforeTheStore(t *testing.T) {
	db := storagetest.Open(t)
	fill(t, db, 3, 40)
	s := newScheduler(t, db, Options{})
	var handed [][]byte
	early := func(answer []byte) {
		if _, err := db.Answer("e1"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("answer stored before early ran (%v)", err)
		}
		handed = append(handed, bytes.Clone(answer))
	}
	data, err := s.AnswerEarly("e1", []byte(`{"size": 6}`), early)
	if err != nil {
		t.Fatal(err)
	}
	if len(handed) != 1 || !bytes.Equal(handed[0], data) {
		t.Fatalf("early got %d answers (%q); want once the returned bytes %q", len(handed), handed, data)
	}
	stored, err := db.Answer("e1")
	if err != nil || !bytes.Equal(stored, data) {
		t.Fatalf("stored %q (%v); want the returned bytes", stored, err)
	}
	again, err := s.AnswerEarly("e1", []byte(`{"size": 6}`), early)
	if err != nil || !bytes.Equal(again, data) || len(handed) != 1 {
		t.Errorf("asked again: %v, same bytes %v, early called %d times; want the stored answer and no call",
			err, bytes.Equal(again, data), len(handed))
	}
	if _, err := s.AnswerEarly("e2", []byte(`{"size": -1}`), early); err == nil || len(handed) != 1 {
		t.Errorf("bad request: err %v, early called %d times; want an error and no call", err, len(handed))
	}
}
