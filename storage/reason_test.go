package storage_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// TestQuarantineReasonIsBounded: a quarantine reason is stored valid UTF-8 and at most
// MaxReason bytes, saying how long it was; it was stored whole (a reason quoting a parquet
// column's path or a row's names could be megabytes). Short, valid reasons are stored as given.
func TestQuarantineReasonIsBounded(t *testing.T) {
	db := storagetest.Open(t)
	long := "bad row: " + strings.Repeat("\xff\xc3", 1<<20) + strings.Repeat("é", 1000)
	commit(t, db, &storage.Batch{Quarantine: []storage.QuarantineEntry{
		{File: 1, Path: "catalog/a.parquet", Reason: long},
		{File: 1, Path: "catalog/b.parquet", Reason: "not a JSON object: é"},
		{File: 1, Path: "catalog/c.parquet", Reason: "x\xffy"},
		{File: 1, Path: "catalog/d.parquet", Reason: strings.Repeat("é", 600)},
	}})
	var got []string
	err := db.View(func(r *storage.Reader) error {
		return r.Quarantine(func(q storage.QuarantineEntry) error { got = append(got, q.Reason); return nil })
	})
	if err != nil || len(got) != 4 {
		t.Fatalf("%d entries: %v", len(got), err)
	}
	for _, r := range []string{got[0], got[3]} {
		if len(r) > storage.MaxReason || !utf8.ValidString(r) || !strings.HasSuffix(r, " bytes in all)") {
			t.Errorf("reason of %d bytes, valid %v: %.80q...%q", len(r), utf8.ValidString(r), r, r[max(0, len(r)-40):])
		}
	}
	if !strings.HasPrefix(got[0], "bad row: \ufffd") || !strings.HasSuffix(got[0], fmt.Sprintf("... (%d bytes in all)", len(long))) {
		t.Errorf("long reason: %.40q ... %q", got[0], got[0][len(got[0])-40:])
	}
	if got[1] != "not a JSON object: é" || got[2] != "x\ufffdy" {
		t.Errorf("short reasons: %q %q", got[1], got[2])
	}
}
