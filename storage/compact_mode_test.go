package storage_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/envsched/envsched/storage"
)

// TestCompactKeepsModeAndOwner: `envsched compact` replaced a database made group-readable for a
// monitoring user (0640, another group) by a copy of mode 0600 owned by the compacting user, so
// that user's `envsched stats` could no longer read it. The copy now has the file's permission
// bits, and (when this process may give them, as root) its owner and group.
func TestCompactKeepsModeAndOwner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "envsched.db")
	db := openAt(t, path, storage.Options{})
	commit(t, db, &storage.Batch{Rollouts: []storage.Rollout{rollout("e", "t", 1, 1, "", "r1")}})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	root := os.Geteuid() == 0
	if root {
		if err := os.Chown(path, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	db = openAt(t, path, storage.Options{})
	if _, err := db.CompactInPlace(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("compacted file mode %v, want 0640 as before", fi.Mode().Perm())
	}
	if st := fi.Sys().(*syscall.Stat_t); root && (st.Uid != 65534 || st.Gid != 65534) {
		t.Errorf("compacted file owned by %d:%d, want 65534:65534 as before", st.Uid, st.Gid)
	}
}
