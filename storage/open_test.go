package storage_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// Opening an existing database writes nothing to it (a write transaction at open would fsync
// the file, flushing all of it that the page cache holds unwritten): the file is byte for byte
// the same after an open and a close, with or without data, and its configuration is read.
func TestOpenOfAnExistingDatabaseWritesNothing(t *testing.T) {
	for _, withData := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "envsched.db")
		db, err := storage.Open(path, storage.Options{Decay: 0.8})
		if err != nil {
			t.Fatal(err)
		}
		if withData {
			commit(t, db, &storage.Batch{Rollouts: []storage.Rollout{rollout("e", "t", 1, 1, "", "r1")}})
		}
		must(t, db.Close())
		before, err := os.ReadFile(path)
		must(t, err)
		db, err = storage.Open(path, storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := db.Config().Decay; got != 0.8 {
			t.Errorf("with data %v: decay %g after reopening; want 0.8", withData, got)
		}
		storagetest.MustCheck(t, db, "")
		must(t, db.Close())
		after, err := os.ReadFile(path)
		must(t, err)
		if !bytes.Equal(before, after) {
			t.Errorf("with data %v: opening and closing the database changed its file", withData)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A --db that is not a database file is refused before bbolt opens it, saying what it is: a
// FIFO opened to read waited for a writer for ever (and the reading commands catch SIGINT and
// SIGTERM: `stats --db FIFO` could only be killed), and opened to write failed with "illegal
// seek"; an empty file opened to read failed with "bad file descriptor" (bbolt wrote a new
// database into it); a folder with "invalid database" or "is a directory".
func TestOpenRefusesWhatIsNotADatabaseFile(t *testing.T) {
	dir := t.TempDir()
	fifo, empty, folder := filepath.Join(dir, "p.db"), filepath.Join(dir, "z.db"), filepath.Join(dir, "d.db")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFO here:", err)
	}
	must(t, os.WriteFile(empty, nil, 0o600))
	must(t, os.Mkdir(folder, 0o755))
	cases := []struct {
		path     string
		readOnly bool
		want     string
	}{
		{fifo, true, "named pipe (FIFO)"},
		{fifo, false, "named pipe (FIFO)"},
		{empty, true, "empty"},
		{folder, true, "folder"},
		{folder, false, "folder"},
	}
	for _, c := range cases {
		done := make(chan error, 1)
		go func() {
			db, err := storage.Open(c.path, storage.Options{ReadOnly: c.readOnly})
			if err == nil {
				db.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
				t.Errorf("Open(%s, read-only %v) = %v; want an error naming it and saying %q", filepath.Base(c.path),
					c.readOnly, err, c.want)
			}
		case <-time.After(10 * time.Second): // only turns a hang into a failure
			t.Errorf("Open(%s, read-only %v) is still waiting", filepath.Base(c.path), c.readOnly)
		}
	}
	if fi, err := os.Stat(empty); err != nil || fi.Size() != 0 {
		t.Errorf("the empty file was written (%v)", err)
	}
}

// Another program's bbolt database given as --db is refused and left byte for byte as it was.
// It was taken for a new database: envsched wrote its buckets and schema into it and went on
// ingesting and answering there. A bbolt file with nothing in it (bbolt's own new file) is
// still made a database.
func TestOpenRefusesAnotherProgramsBoltFile(t *testing.T) {
	dir := t.TempDir()
	other, blank := filepath.Join(dir, "other.db"), filepath.Join(dir, "blank.db")
	for _, p := range []string{other, blank} {
		bdb, err := bolt.Open(p, 0o600, nil)
		must(t, err)
		if p == other {
			must(t, bdb.Update(func(tx *bolt.Tx) error {
				b, err := tx.CreateBucket([]byte("meta")) // a bucket of envsched's name, without its schema
				if err != nil {
					return err
				}
				if err := b.Put([]byte("version"), []byte("7")); err != nil {
					return err
				}
				b, err = tx.CreateBucket([]byte("sessions"))
				if err != nil {
					return err
				}
				return b.Put([]byte("k"), []byte("v"))
			}))
		}
		must(t, bdb.Close())
	}
	before, err := os.ReadFile(other)
	must(t, err)
	for _, ro := range []bool{false, true} {
		db, err := storage.Open(other, storage.Options{ReadOnly: ro})
		if err == nil {
			db.Close()
		}
		if !errors.Is(err, storage.ErrNotEnvsched) || !strings.Contains(err.Error(), `"sessions"`) {
			t.Errorf("Open(other program's database, read-only %v) = %v; want ErrNotEnvsched naming its buckets", ro, err)
		}
	}
	if after, err := os.ReadFile(other); err != nil || !bytes.Equal(after, before) {
		t.Errorf("the other program's database was written (%v)", err)
	}
	db, err := storage.Open(blank, storage.Options{})
	if err != nil {
		t.Fatalf("Open(an empty bbolt file) = %v; want a new database", err)
	}
	must(t, db.Close())
}

// A stored configuration no build writes (a reward range or decay damaged, or edited by hand)
// is refused as corrupt. A NaN reward_max was read as it was: every statistic became NaN, and
// choosing a batch (`envsched batch`, the daemon's first answer) spun at full CPU for ever,
// its lazy greedy taking a NaN gain for one that had changed.
func TestOpenRefusesADamagedConfiguration(t *testing.T) {
	for _, kv := range [][2]string{{"reward_max", "NaN"}, {"reward_min", "2"}, {"reward_max", "+Inf"}, {"decay", "0"}, {"decay", "NaN"}} {
		path := filepath.Join(t.TempDir(), "envsched.db")
		db, err := storage.Open(path, storage.Options{})
		must(t, err)
		must(t, db.Close())
		bdb, err := bolt.Open(path, 0o600, nil)
		must(t, err)
		must(t, bdb.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("meta")).Put([]byte(kv[0]), []byte(kv[1])) }))
		must(t, bdb.Close())
		for _, ro := range []bool{false, true} {
			db, err := storage.Open(path, storage.Options{ReadOnly: ro})
			if err == nil {
				db.Close()
			}
			if !errors.Is(err, storage.ErrCorrupt) {
				t.Errorf("Open with %s = %s stored (read-only %v) = %v; want ErrCorrupt", kv[0], kv[1], ro, err)
			}
		}
	}
}
