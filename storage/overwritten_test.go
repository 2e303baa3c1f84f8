package storage_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envsched/envsched/storage"
)

// TestOverwrittenWhileOpenIsRefused (hostile15): another database's bytes copied over the open
// file in place (`cp other.db envsched.db`, `dd conv=notrunc`: the inode kept, so neither the
// heartbeat's identity check nor its length check sees it) were read as this database's: bbolt
// maps the file shared and reads the meta page at each transaction's begin, so the daemon
// counted the other database's rollouts (rollouts_seen 32,100 for 30,100 written), lost its
// stored answers, and committed pages picked from its own free list into the copy, which was
// then damaged ("decode edges: stored value is corrupt"). Every transaction after the overwrite
// is now refused with a *DamagedError that says the file was overwritten, and the copy is left
// byte for byte as it was written. Both another database and an older copy of this one (a
// backup restored while it runs) are tried.
func TestOverwrittenWhileOpenIsRefused(t *testing.T) {
	other := damagedDB(t) // 8,000 rollouts in 4 commits: a database of another run
	for _, tc := range []struct {
		name   string
		source func(t *testing.T, path string, db *storage.DB) []byte
	}{
		{"another database", func(t *testing.T, _ string, _ *storage.DB) []byte {
			b, err := os.ReadFile(other)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}},
		{"an older copy of itself", func(t *testing.T, path string, db *storage.DB) []byte {
			b, err := os.ReadFile(path) // a backup, taken now
			if err != nil {
				t.Fatal(err)
			}
			for c := range 3 {
				commit(t, db, &storage.Batch{Rollouts: []storage.Rollout{rollout("env-1", "task-1", 1, 5, "", fmt.Sprintf("later-%d", c))}})
			}
			return b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "envsched.db")
			db := openAt(t, path, storage.Options{})
			commit(t, db, &storage.Batch{Rollouts: []storage.Rollout{rollout("mine", "t", 1, 1, "", "mine-1")}})
			copied := tc.source(t, path, db)
			f, err := os.OpenFile(path, os.O_WRONLY, 0) // in place: no truncation, the inode kept
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt(copied, 0); err != nil {
				t.Fatal(err)
			}
			f.Close()
			before, _ := os.ReadFile(path)
			ops := []struct {
				name string
				do   func() error
			}{
				{"counters", func() error { _, err := db.Counters(); return err }},
				{"commit", func() error {
					_, err := db.Commit(&storage.Batch{Rollouts: []storage.Rollout{rollout("mine", "t", 0, 2, "", "mine-2")}})
					return err
				}},
				{"answer", func() error { return db.StoreAnswer("r1", 2, []byte("{}"), nil, nil) }},
				{"envs", func() error { _, err := db.Envs(); return err }},
			}
			for _, op := range ops {
				err := within(t, op.name, op.do)
				var d *storage.DamagedError
				if !errors.As(err, &d) || !d.Overwritten || !strings.Contains(err.Error(), "was overwritten in place") {
					t.Errorf("%s after the file was overwritten: %v; want a DamagedError saying it was overwritten", op.name, err)
				}
			}
			within(t, "close", db.Close)
			if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
				t.Errorf("the file copied over the database was written into (%d bytes, %d before)", len(after), len(before))
			}
		})
	}
}
