package snapshot

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMessagesNameTheRealFolder: the server works through a descriptor of the folder, naming its
// files /proc/self/fd/N/NAME, and its log lines and error files said so ("rename
// /proc/self/fd/7/.x1.db.tmp-... /proc/self/fd/7/x1.db: file exists"), a path that means nothing
// to the reader. They now name DIR/snapshots. Here the copy cannot be renamed into place (a
// folder of that name is there).
func TestMessagesNameTheRealFolder(t *testing.T) {
	dir := t.TempDir()
	folder := Dir(dir)
	if err := os.MkdirAll(filepath.Join(folder, "x1"+dbSuffix, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, "x1"+wantSuffix), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // one pass, then stop
	if err := Serve(ctx, emptySource{}, dir, ServeOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))}); err != nil {
		t.Fatal(err)
	}
	msg, err := os.ReadFile(filepath.Join(folder, "x1"+errorSuffix))
	if err != nil {
		t.Fatalf("no error file: %v\n%s", err, logs.String())
	}
	for what, text := range map[string]string{"error file": string(msg), "log": logs.String()} {
		if strings.Contains(text, "/proc/self/fd") || !strings.Contains(text, folder) {
			t.Errorf("the %s does not name %s: %s", what, folder, text)
		}
	}
}

type emptySource struct{}

func (emptySource) WriteSnapshot(w io.Writer) (int64, error) {
	n, err := w.Write([]byte("x"))
	return int64(n), err
}
