package daemon

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/envsched/envsched/fsutil"
)

// TestPublishReachesEachCrashPointOnce: a publication passes each crash point once, whichever
// way it goes: the early temporary copy renamed, no early copy, or the early copy lost with its
// folder (removed and made again by the trainer) and the file written anew, which passed
// CrashBeforeRename twice and so made ENVSCHED_CRASHPOINT=before-rename:N kill at the wrong
// publication. In every case the file holds the answer and no temporary file is left.
func TestPublishReachesEachCrashPointOnce(t *testing.T) {
	answer := []byte(`{"id":"r1"}` + "\n")
	cases := []struct {
		name  string
		early bool
		lose  bool // the folder is removed and made again between the early write and the rename
	}{
		{"early copy renamed", true, false},
		{"no early copy", false, false},
		{"early copy lost with its folder", true, true},
	}
	for _, tc := range cases {
		for _, point := range []string{CrashBeforeRename, CrashBeforeDirSync} {
			t.Run(tc.name+"/"+point, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "batches")
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				var file *fsutil.Prepared
				if tc.early {
					var err error
					file, err = fsutil.Prepare(filepath.Join(dir, "r1.json"), 0o644, func(w io.Writer) error {
						_, err := w.Write(answer)
						return err
					})
					if err != nil {
						t.Fatal(err)
					}
				}
				if tc.lose {
					if err := os.RemoveAll(dir); err != nil {
						t.Fatal(err)
					}
					if err := os.Mkdir(dir, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				crash := crasher{name: point, n: 1000} // counts, never kills here
				if err := publishBatch(dir, "r1.json", answer, file, &crash); err != nil {
					t.Fatal(err)
				}
				if crash.hits != 1 {
					t.Errorf("%s reached %d times, want 1", point, crash.hits)
				}
				got, err := os.ReadFile(filepath.Join(dir, "r1.json"))
				if err != nil || !bytes.Equal(got, answer) {
					t.Errorf("r1.json holds %q (%v), want %q", got, err, answer)
				}
				entries, _ := os.ReadDir(dir)
				if len(entries) != 1 {
					t.Errorf("folder holds %d entries, want r1.json alone", len(entries))
				}
			})
		}
	}
}
