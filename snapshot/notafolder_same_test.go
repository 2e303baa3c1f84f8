package snapshot

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReaderAndDaemonSayTheSameOfWhatIsNoFolder (fix11, sibling of review11's not-a-folder
// finding): whatever stands at DIR/snapshots instead of a folder (a file, a FIFO, a socket, a
// link to a folder or to a file), the reader's refusal holds the daemon's own words for it, and
// is ErrNoServer.
func TestReaderAndDaemonSayTheSameOfWhatIsNoFolder(t *testing.T) {
	for _, kind := range []string{"file", "fifo", "socket", "link to a folder", "link to a file"} {
		dir := t.TempDir()
		folder := filepath.Join(dir, "snapshots")
		var err error
		switch kind {
		case "file":
			err = os.WriteFile(folder, []byte("x"), 0o644)
		case "fifo":
			err = syscall.Mkfifo(folder, 0o644)
		case "socket":
			var l net.Listener
			if l, err = net.Listen("unix", folder); err == nil {
				defer l.Close()
			}
		case "link to a folder":
			err = os.Symlink(t.TempDir(), folder)
		case "link to a file":
			f := filepath.Join(t.TempDir(), "f")
			if err = os.WriteFile(f, nil, 0o644); err == nil {
				err = os.Symlink(f, folder)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		daemonSays := ensureFolder(folder)
		if daemonSays == nil {
			t.Fatalf("%s: the daemon's check accepts it", kind)
		}
		_, readerSays := request(context.Background(), folder, Options{})
		if readerSays == nil || !strings.Contains(readerSays.Error(), daemonSays.Error()) || !errors.Is(readerSays, ErrNoServer) {
			t.Errorf("%s: the reader says %v; want the daemon's words %q, as ErrNoServer", kind, readerSays, daemonSays)
		}
	}
}
