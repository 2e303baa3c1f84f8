package storage_test

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/envsched/envsched/storage"
)

// TestCutShortWhileOpenFailsAndCloses: a database file truncated while a process has it open
// (`: > envsched.db`, or `cp` of a smaller file over it, beside a running daemon) made the next
// commit fault; bbolt's rollback faulted again and left its writer's lock held, so the commit
// after it, and Close, waited for ever (the daemon stopped answering, never exited and ignored
// SIGTERM). Every operation after the damage now fails with storage.ErrCorrupt at once, and
// Close returns.
func TestCutShortWhileOpenFailsAndCloses(t *testing.T) {
	for _, size := range []int64{0, 4096 * 3} {
		t.Run(fmt.Sprintf("cut to %d bytes", size), func(t *testing.T) {
			path := damagedDB(t)
			db, err := storage.Open(path, storage.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, size); err != nil {
				t.Fatal(err)
			}
			ops := []struct {
				name string
				do   func() error
			}{
				{"commit", func() error {
					b := &storage.Batch{}
					for j := range 100 {
						b.Rollouts = append(b.Rollouts, rollout("env-1", fmt.Sprintf("task-%d", j), 1, 99, "", fmt.Sprintf("new-%d", j)))
					}
					_, err := db.Commit(b)
					return err
				}},
				{"counters", func() error { _, err := db.Counters(); return err }},
				{"second commit", func() error {
					_, err := db.Commit(&storage.Batch{Rollouts: []storage.Rollout{rollout("env-1", "task-1", 1, 99, "", "again")}})
					return err
				}},
				{"envs", func() error { _, err := db.Envs(); return err }},
			}
			for _, op := range ops {
				err := within(t, op.name, op.do)
				if !errors.Is(err, storage.ErrCorrupt) {
					t.Errorf("%s on a file cut short while open: %v, want storage.ErrCorrupt", op.name, err)
				}
			}
			within(t, "close", db.Close)
		})
	}
}

// within runs fn and returns its error; it fails the test (and leaves fn running) when fn
// takes more than 20 seconds.
func within(t *testing.T, name string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not return in 20 s (it waits for a lock a faulted transaction left held)", name)
		return nil
	}
}
