package storage_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envsched/envsched/storage"
)

// damagedDB writes a database of a few thousand rollouts at dir/envsched.db and returns its
// path and page size.
func damagedDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "envsched.db")
	db := openAt(t, path, storage.Options{})
	for c := range 4 {
		b := &storage.Batch{}
		for i := range 2000 {
			n := c*2000 + i
			b.Rollouts = append(b.Rollouts, rollout(fmt.Sprintf("env-%d", n%3), fmt.Sprintf("task-%d", n%700),
				float64(n%2), int64(1+n/100), "", fmt.Sprintf("r-%d", n)))
		}
		commit(t, db, b)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDamagedDatabaseIsAnErrorNotAPanic: a database file cut short or with its pages
// overwritten made bbolt panic (or fault) in Open, in reads and in commits; every one of them
// now returns an error wrapping storage.ErrCorrupt that names the file and says what to do.
func TestDamagedDatabaseIsAnErrorNotAPanic(t *testing.T) {
	const page = 4096
	cases := []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"cut mid-file", func(t *testing.T, path string) {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, fi.Size()/2+100); err != nil {
				t.Fatal(err)
			}
		}},
		{"every page but the meta pages overwritten", func(t *testing.T, path string) { scribble(t, path, page, 1) }},
		{"every third page overwritten", func(t *testing.T, path string) { scribble(t, path, page, 3) }},
	}
	for _, c := range cases {
		for _, ro := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/readonly=%v", c.name, ro), func(t *testing.T) {
				path := damagedDB(t)
				c.damage(t, path)
				errs := useDamaged(t, path, ro)
				if len(errs) == 0 {
					t.Fatal("the damage went unnoticed: no operation failed, so nothing was tested")
				}
				for _, err := range errs {
					if !errors.Is(err, storage.ErrCorrupt) || !strings.Contains(err.Error(), path) ||
						!strings.Contains(err.Error(), "restore it from a backup") {
						t.Errorf("error %q: want storage.ErrCorrupt naming %s and what to do", err, path)
					}
					// A page past the end met in a writable open said only "runtime error:
					// invalid memory address or nil pointer dereference".
					if c.name == "cut mid-file" && !strings.Contains(err.Error(), "cut short") {
						t.Errorf("error %q: want it to say the file was cut short", err)
					}
				}
			})
		}
	}
}

// useDamaged opens the database and reads and writes it as the commands do; it returns the
// errors met (none may be a panic).
func useDamaged(t *testing.T, path string, readOnly bool) []error {
	t.Helper()
	db, err := storage.Open(path, storage.Options{ReadOnly: readOnly})
	if err != nil {
		return []error{err}
	}
	defer db.Close()
	var errs []error
	note := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	_, err = db.Counters()
	note(err)
	_, err = db.Envs()
	note(err)
	note(db.View(func(r *storage.Reader) error {
		return r.Rollouts(func(*storage.StoredRollout) error { return nil })
	}))
	note(db.View(func(r *storage.Reader) error {
		return r.Tasks(true, func(storage.TaskInfo) error { return nil })
	}))
	if !readOnly {
		_, err = db.Commit(&storage.Batch{Rollouts: []storage.Rollout{rollout("env-1", "task-1", 1, 99, "", "new")}})
		note(err)
	}
	return errs
}

// scribble overwrites every every-th page after the two meta pages with seeded random bytes.
func scribble(t *testing.T, path string, page, every int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, page)
	for off := int64(2 * page); off < fi.Size(); off += int64(every * page) {
		for i := range buf {
			buf[i] = byte(rng.Uint32())
		}
		if _, err := f.WriteAt(buf, off); err != nil {
			t.Fatal(err)
		}
	}
}
