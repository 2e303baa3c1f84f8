package storage_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envsched/envsched/storage"
)

// TestCutShortSaysSoInEitherModeAndMeta (fix11, siblings of review11's cut-short finding): at
// lengths between pages and on page boundaries, with the first meta page whole or zeroed (the
// second then counts), a writable and a read-only open of a file cut short within its pages both
// fail with a DamagedError saying it was cut short (cut only in the room bbolt grew the file by,
// it opens); the whole file, and one with zeros appended, open.
func TestCutShortSaysSoInEitherModeAndMeta(t *testing.T) {
	data, err := os.ReadFile(damagedDB(t))
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	for _, zeroMeta0 := range []bool{false, true} {
		whole := append([]byte(nil), data...)
		if zeroMeta0 {
			clear(whole[:page])
		}
		refused := 0
		for n := 3 * page; n < len(whole); n += 23*page + 1 + (n % 5 * 1000) {
			for _, ro := range []bool{false, true} {
				path := filepath.Join(t.TempDir(), "envsched.db")
				if err := os.WriteFile(path, whole[:n], 0o600); err != nil {
					t.Fatal(err)
				}
				db, err := storage.Open(path, storage.Options{ReadOnly: ro})
				if err == nil {
					db.Close() // cut in the room bbolt grew the file by, past its pages: whole
					continue
				}
				refused++
				if !errors.Is(err, storage.ErrCorrupt) || !strings.Contains(err.Error(), "cut short") {
					t.Errorf("meta 0 zeroed %v, read-only %v: cut to %d of %d bytes: %v; want it damaged, cut short",
						zeroMeta0, ro, n, len(whole), err)
				}
			}
		}
		if refused == 0 {
			t.Errorf("meta 0 zeroed %v: no length refused; the test cuts nothing that matters", zeroMeta0)
		}
		for _, extra := range []int{0, 3 * page} {
			path := filepath.Join(t.TempDir(), "envsched.db")
			if err := os.WriteFile(path, append(whole, make([]byte, extra)...), 0o600); err != nil {
				t.Fatal(err)
			}
			db, err := storage.Open(path, storage.Options{})
			if err != nil {
				t.Errorf("meta 0 zeroed %v, %d bytes appended: %v; want it to open", zeroMeta0, extra, err)
				continue
			}
			db.Close()
		}
	}
}
