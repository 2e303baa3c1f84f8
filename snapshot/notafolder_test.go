package snapshot_test

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/envsched/envsched/snapshot"
)

// TestReaderSaysSnapshotsIsNotAFolder (review11): hostile8 (ff6cef5) made a reader that meets
// DIR/snapshots replaced by a symbolic link say so. Replaced by a regular file or a FIFO (which
// the running daemon logs as "snapshot folder unusable ... not a real folder; remove it"), the
// reader still says "DIR/snapshots does not exist, so the process holding the database serves no
// snapshots (an `envsched ingest`, or an older `envsched run`)": the path exists, and the holder
// is a current envsched run, so the advice (wait until it is done) is wrong. Seen with the binary:
// `envsched stats --dir D` beside `envsched run --dir D` with D/snapshots a file.
func TestReaderSaysSnapshotsIsNotAFolder(t *testing.T) {
	for _, kind := range []string{"file", "fifo"} {
		dir, path, _ := held(t)
		var err error
		if kind == "file" {
			err = os.WriteFile(snapshot.Dir(dir), []byte("x\n"), 0o644)
		} else {
			err = syscall.Mkfifo(snapshot.Dir(dir), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err = snapshot.Open(ctx, dir, path, snapshot.Options{Wait: 5 * time.Second})
		cancel()
		if err == nil || strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), "not a") {
			t.Errorf("DIR/snapshots a %s: %v; want a refusal saying it is not a folder, not that it does not exist", kind, err)
		}
	}
}
