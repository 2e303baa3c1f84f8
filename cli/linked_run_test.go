package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunRefusesLinkedFoldersAsIngestAndBatchDo (fix11, review11's note): `run` exited 1 for
// DIR/rollouts or DIR/catalog a symbolic link (the daemon's refusal at start) while `ingest` and
// `batch` exit 2; every folder of DIR that is a link or a file now makes run exit 2 too, before
// anything starts, saying what it is.
func TestRunRefusesLinkedFoldersAsIngestAndBatchDo(t *testing.T) {
	for _, folder := range []string{"catalog", "rollouts", "requests", "batches", "snapshots"} {
		for _, kind := range []string{"link", "file"} {
			dir := t.TempDir()
			var err error
			if kind == "link" {
				err = os.Symlink(t.TempDir(), filepath.Join(dir, folder))
			} else {
				err = os.WriteFile(filepath.Join(dir, folder), nil, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
			code, _, errOut := opsApp(t, "run", "--dir", dir)
			if code != exitUsage || !strings.Contains(errOut, "not a folder") {
				t.Errorf("run with DIR/%s a %s: exit %d %q; want 2 saying it is not a folder", folder, kind, code, errOut)
			}
		}
	}
}
