package ingest

import (
	"reflect"
	"testing"

	"github.com/envsched/envsched/storage"
)

// TestRenameDuringFullScan renames a rollout file while a full scan runs, between the listing
// and the reading, and checks that the file keeps its place (its id and offset): every line is
// stored once, not read again from the start under its new name.
func TestRenameDuringFullScan(t *testing.T) {
	cases := []struct {
		name string
		drop bool // the listing missed the file altogether (a rename racing the listing)
	}{
		{"listed under its old name, opened after the rename", false},
		{"missed by the listing", true},
	}
	const moved = "rollouts/sub/moved.jsonl"
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var e *env
			renamed := false
			e = newEnv(t, Options{afterList: func(cands []candidate) []candidate {
				if renamed {
					return cands
				}
				renamed = true
				mustRename(e, f, moved)
				if tc.drop {
					return nil
				}
				return cands
			}})
			renamed = true // not on the first scan
			e.write(f, lines("a"))
			e.scan()
			id := fileID(e, f)
			renamed = false
			e.append(f, lines("b"))
			e.scan() // the rename races this scan
			e.append(moved, lines("c"))
			e.scan()
			if got, want := e.tasks(), stored1("a", "b", "c"); !reflect.DeepEqual(got, want) {
				t.Errorf("stored %v, want %v", got, want)
			}
			if got := fileID(e, moved); got != id {
				t.Errorf("file id under the new name %d, want %d (its place kept)", got, id)
			}
			e.reopen()
			if s := e.scan(); s.Rollouts != 0 {
				t.Errorf("a scan after reopening stored %+v; want nothing new", s)
			}
		})
	}
}

// TestDeletedFileIsGone checks that a file truly deleted is still marked gone by a full scan.
func TestDeletedFileIsGone(t *testing.T) {
	e := newEnv(t, Options{})
	e.write(f, lines("a"))
	e.scan()
	mustRemove(e, f)
	e.scan()
	var gone bool
	err := e.db.View(func(r *storage.Reader) error {
		fs, err := r.Files()
		for _, st := range fs {
			gone = gone || (st.Path == f && st.Gone)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !gone {
		t.Errorf("deleted file %s not marked gone", f)
	}
}

// fileID returns the id of the tracked, not gone file at rel (0 if none).
func fileID(e *env, rel string) uint64 {
	e.t.Helper()
	var id uint64
	err := e.db.View(func(r *storage.Reader) error {
		fs, err := r.Files()
		for _, st := range fs {
			if st.Path == rel && !st.Gone {
				id = st.ID
			}
		}
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}
