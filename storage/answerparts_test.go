package storage

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/envsched/envsched/record"
)

// answerDB is a database with tasks e/t0 .. e/t(n−1), each with one rollout.
func answerDB(t *testing.T, n int) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "envsched.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var b Batch
	for i := range n {
		b.Rollouts = append(b.Rollouts, Rollout{Rollout: record.Rollout{Env: "e", Task: fmt.Sprintf("t%d", i), Reward: 1}, File: 1})
	}
	if _, err := db.Commit(&b); err != nil {
		t.Fatal(err)
	}
	return db, path
}

// answerOfSize is an answer of exactly n bytes (n >= 2) that differs from every other of the
// same size by seed.
func answerOfSize(n, seed int) []byte {
	body := strings.Repeat(strconv.Itoa(seed%10), n)
	return []byte("{" + body[:n-2] + "}")
}

func storedSchema(t *testing.T, db *DB) int {
	t.Helper()
	var s int
	err := db.view(func(tx *bolt.Tx) error {
		var err error
		s, err = strconv.Atoi(string(tx.Bucket(bucketMeta).Get([]byte("schema"))))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAnswersOfEverySizeReadBack(t *testing.T) {
	sizes := []int{2, 3, answerPartBytes - 1, answerPartBytes, answerPartBytes + 1, 2 * answerPartBytes,
		2*answerPartBytes + 1, 118_000}
	db, path := answerDB(t, 1)
	chosen := []TaskKey{{"e", "t0"}}
	want := map[string][]byte{}
	for i, n := range sizes {
		id := fmt.Sprintf("r%d", i)
		want[id] = answerOfSize(n, i)
		if err := db.StoreAnswer(id, int64(i+1), want[id], chosen, nil); err != nil {
			t.Fatal(err)
		}
	}
	// bytes that begin as a reference does are stored in parts, even when short
	want["zero"] = []byte{answerRefMark, 1, 1, 1}
	want["empty"] = []byte{}
	for _, id := range []string{"zero", "empty"} {
		if err := db.StoreAnswer(id, 20, want[id], chosen, nil); err != nil {
			t.Fatal(err)
		}
	}
	read := func(db *DB) {
		t.Helper()
		for id, w := range want {
			got, err := db.Answer(id)
			if err != nil || !bytes.Equal(got, w) {
				t.Errorf("answer %s: %d bytes, %v; want %d bytes", id, len(got), err, len(w))
			}
		}
		n := 0
		err := db.View(func(r *Reader) error {
			return r.Answers(func(id string, a []byte) error {
				n++
				if !bytes.Equal(a, want[id]) {
					t.Errorf("Answers: %s has %d bytes, want %d", id, len(a), len(want[id]))
				}
				return nil
			})
		})
		if err != nil || n != len(want) {
			t.Errorf("Answers: %d answers, %v; want %d", n, err, len(want))
		}
		if err := db.Check(""); err != nil {
			t.Error(err)
		}
	}
	read(db)
	db.Close()
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	read(db)
	if s := storedSchema(t, db); s != schemaAnswerParts {
		t.Errorf("schema %d after answers in parts, want %d", s, schemaAnswerParts)
	}
	// compacted, the parts and their sequence move with it: a later answer takes new parts
	if _, err := db.CompactInPlace(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err = Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	want["after"] = answerOfSize(5000, 7)
	if err := db.StoreAnswer("after", 30, want["after"], chosen, nil); err != nil {
		t.Fatal(err)
	}
	read(db)
}

func TestSmallAnswersKeepSchema1(t *testing.T) {
	db, _ := answerDB(t, 1)
	if err := db.StoreAnswer("r", 1, answerOfSize(answerPartBytes, 1), []TaskKey{{"e", "t0"}}, nil); err != nil {
		t.Fatal(err)
	}
	if s := storedSchema(t, db); s != 1 {
		t.Errorf("schema %d with only whole answers, want 1 (an older envsched reads it)", s)
	}
	if err := db.StoreAnswer("big", 2, answerOfSize(answerPartBytes+1, 1), []TaskKey{{"e", "t0"}}, nil); err != nil {
		t.Fatal(err)
	}
	if s := storedSchema(t, db); s != schemaAnswerParts {
		t.Errorf("schema %d after an answer in parts, want %d", s, schemaAnswerParts)
	}
}

// TestWholeAnswersOfOlderDatabasesAreRead: answers of any size stored whole in requests, as
// every envsched before the parts stored them, read back as they were.
func TestWholeAnswersOfOlderDatabasesAreRead(t *testing.T) {
	db, _ := answerDB(t, 1)
	want := map[string][]byte{"old-small": answerOfSize(40, 1), "old-big": answerOfSize(118_000, 2)}
	err := db.update(func(tx *bolt.Tx) error {
		for id, a := range want {
			if err := tx.Bucket(bucketRequests).Put([]byte(id), a); err != nil {
				return err
			}
		}
		c, err := readCounters(tx)
		if err != nil {
			return err
		}
		c.RequestsAnswered += int64(len(want))
		return writeCounters(tx, c)
	})
	if err != nil {
		t.Fatal(err)
	}
	want["new-big"] = answerOfSize(50_000, 3)
	if err := db.StoreAnswer("new-big", 3, want["new-big"], []TaskKey{{"e", "t0"}}, nil); err != nil {
		t.Fatal(err)
	}
	for id, w := range want {
		if got, err := db.Answer(id); err != nil || !bytes.Equal(got, w) {
			t.Errorf("answer %s: %d bytes, %v; want %d", id, len(got), err, len(w))
		}
	}
	if err := db.Check(""); err != nil {
		t.Error(err)
	}
}

// TestBrokenAnswerPartsAreFound: every way a reference and its parts can disagree is an error
// of Answer wrapping ErrCorrupt, and of Check.
func TestBrokenAnswerPartsAreFound(t *testing.T) {
	cases := []struct {
		name    string
		corrupt func(tx *bolt.Tx) error
	}{
		{"a part missing", func(tx *bolt.Tx) error { return tx.Bucket(bucketAnswerParts).Delete(u64key(2)) }},
		{"a part cut short", func(tx *bolt.Tx) error { return tx.Bucket(bucketAnswerParts).Put(u64key(3), []byte("x")) }},
		{"the parts bucket gone", func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketAnswerParts) }},
		{"a reference cut short", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketRequests).Put([]byte("r"), []byte{answerRefMark, 1})
		}},
		{"a reference to more bytes than its parts hold", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketRequests).Put([]byte("r"), []byte{answerRefMark, 1, 1, 0xff, 0x7f})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db, _ := answerDB(t, 1)
			if err := db.StoreAnswer("r", 1, answerOfSize(4*answerPartBytes, 1), []TaskKey{{"e", "t0"}}, nil); err != nil {
				t.Fatal(err)
			}
			if err := db.update(c.corrupt); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Answer("r"); !errors.Is(err, ErrCorrupt) {
				t.Errorf("Answer: %v, want ErrCorrupt", err)
			}
			if err := db.Check(""); err == nil || !strings.Contains(err.Error(), "answer") {
				t.Errorf("Check: %v, want a fault of the answer", err)
			}
		})
	}
	t.Run("a part no answer refers to", func(t *testing.T) {
		db, _ := answerDB(t, 1)
		if err := db.StoreAnswer("r", 1, answerOfSize(4*answerPartBytes, 1), []TaskKey{{"e", "t0"}}, nil); err != nil {
			t.Fatal(err)
		}
		err := db.update(func(tx *bolt.Tx) error { return tx.Bucket(bucketAnswerParts).Put(u64key(99), []byte("x")) })
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Check(""); err == nil || !strings.Contains(err.Error(), "answer parts: 5 stored, 4 referred to") {
			t.Errorf("Check: %v, want the stray part counted", err)
		}
	})
}

// writtenBytes is what this process has passed to write calls (Linux), or −1.
func writtenBytes() int {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return -1
}

// TestALargeAnswerIsWrittenOnce: storing an answer writes its bytes about once, not again the
// answers stored before it (a leaf of bbolt holding two to four whole answers was rewritten
// whole by each). Every tenth task is chosen, so marking them dirties few pages.
func TestALargeAnswerIsWrittenOnce(t *testing.T) {
	if writtenBytes() < 0 {
		t.Skip("no /proc/self/io")
	}
	db, _ := answerDB(t, 10)
	const size = 118_000
	for i := range 8 {
		w0 := writtenBytes()
		id := fmt.Sprintf("r%d", i)
		if err := db.StoreAnswer(id, int64(i+1), answerOfSize(size, i), []TaskKey{{"e", "t1"}}, nil); err != nil {
			t.Fatal(err)
		}
		if w := writtenBytes() - w0; i >= 2 && w > size*3/2 {
			t.Errorf("answer %d of %d bytes: %d bytes written", i, size, w)
		}
	}
}
