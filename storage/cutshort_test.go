package storage_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envsched/envsched/storage"
)

// TestCutShortSaysSoAtAnyLength (review11): hostile8 (6745f55) made a writable open of a
// database cut short say "cut short or overwritten" when bbolt faults on a page past the end,
// and its test cuts the file at one length (half + 100 bytes). Cut elsewhere, the writable open
// (run, ingest, batch, compact) meets the freelist page inside the last, zero-filled page of the
// mapping instead, and says "invalid freelist page: 0, page type is unknown<00>", while a read-only
// open of the same file (stats, export) says "the file has N bytes, its pages need M: it was cut
// short". The length check that read-only opens make could be made before a writable one too.
func TestCutShortSaysSoAtAnyLength(t *testing.T) {
	data, err := os.ReadFile(damagedDB(t))
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	bad := 0
	tried := 0
	for n := 2*page + 100; n < len(data); n += 16 * page {
		tried++
		path := filepath.Join(t.TempDir(), "envsched.db")
		if err := os.WriteFile(path, data[:n], 0o600); err != nil {
			t.Fatal(err)
		}
		db, err := storage.Open(path, storage.Options{})
		if err == nil {
			db.Close()
			continue // the freelist and meta fit: found by the reads, as the existing test checks
		}
		if !strings.Contains(err.Error(), "cut short") {
			bad++
			if bad <= 3 {
				t.Errorf("cut to %d of %d bytes, a writable open says %q; want it to say the file was cut short", n, len(data), err)
			}
		}
	}
	if bad > 3 {
		t.Errorf("... and at %d more of the %d lengths tried", bad-3, tried)
	}
}
