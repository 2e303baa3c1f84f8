package storage

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/envsched/envsched/ledger"
	"github.com/envsched/envsched/record"
)

// pendingModel is what pending must hold: per task seq, its open predictions (answer, rank)
// oldest first, as answers put them in pending at once and expired their oldest.
type pendingModel struct {
	open    map[uint64][][2]uint64
	expired int64
}

func (m *pendingModel) admit(seq, answer uint64, rank int) {
	o := m.open[seq]
	if n := len(o); n >= ledger.MaxOpen {
		m.expired += int64(n - ledger.MaxOpen + 1)
		o = o[n-ledger.MaxOpen+1:]
	}
	m.open[seq] = append(o, [2]uint64{answer, uint64(rank)})
}

func (m *pendingModel) keys() []string {
	var out []string
	for seq, o := range m.open {
		for _, ar := range o {
			out = append(out, fmt.Sprintf("%d/%d/%d", seq, ar[0], ar[1]))
		}
	}
	slices.Sort(out)
	return out
}

func pendingKeys(t *testing.T, db *DB) []string {
	t.Helper()
	var out []string
	err := db.view(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketCalib)
		if bk == nil {
			return nil
		}
		return bk.Bucket(calibPending).ForEach(func(k, _ []byte) error {
			out = append(out, fmt.Sprintf("%d/%d/%d", binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:]),
				binary.BigEndian.Uint32(k[16:])))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// journaled is the number of journaled predictions and of the answers they are of.
func journaled(t *testing.T, db *DB) (n, answers int) {
	t.Helper()
	seen := map[uint64]bool{}
	err := db.view(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketCalib)
		if bk == nil {
			return nil
		}
		return eachJournaled(bk.Bucket(calibOpening), func(e journalEntry) error { n++; seen[e.answer] = true; return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	return n, len(seen)
}

// TestJournalFilesAsAnswersPutAtOnce: random answers (tasks chosen once or twice, repeated
// over answers past MaxOpen), commits with and without rollouts, reopenings and runs of more
// than journalAnswers answers with no rollout between: after every filing, pending holds
// exactly the predictions that putting each at its answer would have left, the expired count
// is the same at every answer, and Check passes throughout.
func TestJournalFilesAsAnswersPutAtOnce(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 9))
			path := filepath.Join(t.TempDir(), "envsched.db")
			db, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { db.Close() }()
			const tasks = 12
			var rows []record.Task
			for i := range tasks {
				rows = append(rows, record.Task{Env: "e", Task: fmt.Sprint("t", i)})
			}
			if _, err := db.Commit(&Batch{Tasks: rows}); err != nil {
				t.Fatal(err)
			}
			m := pendingModel{open: map[uint64][][2]uint64{}}
			seqOf := func(task string) uint64 {
				var s uint64
				err := db.View(func(r *Reader) error {
					var o taskOverlay
					if err := o.load(r.tx, nil); err != nil {
						return err
					}
					rec, ok, err := loadTaskRecord(r.tx, &o, TaskKey{"e", task})
					if !ok && err == nil {
						err = fmt.Errorf("no task %s", task)
					}
					s = rec.Seq
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			answers := uint64(0)
			step := int64(0)
			for op := range 200 {
				switch k := rng.IntN(20); {
				case k < 15 || op > 100 && op < 180: // an answer (a long run of them past journalAnswers)
					answers++
					step++
					a := AnswerRecord{ID: fmt.Sprint("r", answers), Step: step, Answer: []byte("x"), GroupSize: 2}
					for r := range 1 + rng.IntN(5) {
						task := fmt.Sprint("t", rng.IntN(tasks/2)) // half the tasks: repeats past MaxOpen
						a.Chosen = append(a.Chosen, TaskKey{"e", task})
						a.Predictions = append(a.Predictions, ledger.Prediction{Env: "e", Task: task, Rank: r + 1, PDegenerate: 0.5, Mean: 0.5})
						m.admit(seqOf(task), answers, r+1)
					}
					if err := db.StoreAnswerRecord(a); err != nil {
						t.Fatal(err)
					}
				case k < 17: // a rollout of a task never chosen: files the journal, measures nothing
					r := Rollout{Rollout: record.Rollout{Env: "e", Task: fmt.Sprint("t", tasks-1), Reward: 1, RolloutID: fmt.Sprint("x", op)}}
					if _, err := db.Commit(&Batch{Rollouts: []Rollout{r}}); err != nil {
						t.Fatal(err)
					}
					if n, _ := journaled(t, db); n != 0 {
						t.Fatalf("op %d: %d predictions journaled after a commit of rollouts", op, n)
					}
					if got, want := pendingKeys(t, db), m.keys(); !slices.Equal(got, want) {
						t.Fatalf("op %d: pending %v\nwant %v", op, got, want)
					}
				case k < 18: // a commit without rollouts leaves the journal
					if _, err := db.Commit(&Batch{Tasks: rows[:1]}); err != nil {
						t.Fatal(err)
					}
				default:
					db.Close()
					if db, err = Open(path, Options{}); err != nil {
						t.Fatal(err)
					}
				}
				if _, n := journaled(t, db); n > journalAnswers {
					t.Fatalf("op %d: %d answers journaled, at most %d", op, n, journalAnswers)
				}
				cal, err := db.Calibration(0)
				if err != nil {
					t.Fatal(err)
				}
				if cal.Totals.Expired != m.expired {
					t.Fatalf("op %d: %d expired, want %d", op, cal.Totals.Expired, m.expired)
				}
				if op%10 == 0 {
					if err := db.Check(""); err != nil {
						t.Fatalf("op %d: %v", op, err)
					}
				}
			}
			if err := db.Check(""); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestAnAnswerWritesItsPredictionsOnce: an answer's 512 predictions over tasks that already
// have open ones are appended together, not put on the page of each task's (which rewrote about
// every page of pending with each answer).
func TestAnAnswerWritesItsPredictionsOnce(t *testing.T) {
	if writtenBytes() < 0 {
		t.Skip("no /proc/self/io")
	}
	const tasks, size = 4000, 512
	db, _ := answerDB(t, tasks)
	rng := rand.New(rand.NewPCG(1, 2))
	answer := func(i int) int {
		a := AnswerRecord{ID: fmt.Sprint("r", i), Step: int64(i + 1), Answer: []byte("x"), GroupSize: 2}
		for r, k := range rng.Perm(tasks)[:size] {
			task := fmt.Sprint("t", k)
			a.Chosen = append(a.Chosen, TaskKey{"e", task})
			a.Predictions = append(a.Predictions, ledger.Prediction{Env: "e", Task: task, Rank: r + 1, PDegenerate: 0.5, Mean: 0.5})
		}
		w0 := writtenBytes()
		if err := db.StoreAnswerRecord(a); err != nil {
			t.Fatal(err)
		}
		return writtenBytes() - w0
	}
	for i := range 16 {
		answer(i)
	}
	// file the journal: 8,192 predictions in pending
	r := Rollout{Rollout: record.Rollout{Env: "e", Task: "t0", Reward: 1, RolloutID: "file"}}
	if _, err := db.Commit(&Batch{Rollouts: []Rollout{r}}); err != nil {
		t.Fatal(err)
	}
	for i := 16; i < 20; i++ {
		if w := answer(i); w > 160<<10 {
			t.Errorf("answer %d of %d predictions: %d bytes written", i, size, w)
		}
	}
	if err := db.Check(""); err != nil {
		t.Error(err)
	}
}
