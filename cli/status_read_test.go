package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStatusNamesAnUnreadableFileOnce: a status.json that cannot be read (a FIFO, a folder, a
// file over 16 MiB) is named once in the message; it said "read PATH: PATH is not a regular
// file" and "read PATH: read PATH: 17825792 bytes", the path twice.
func TestStatusNamesAnUnreadableFileOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "status.json")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := opsApp(t, "status", "--dir", dir)
	if code != exitError || strings.Count(errOut, path) != 1 || !strings.Contains(errOut, "not a regular file") {
		t.Errorf("status.json a folder: exit %d, %q; want exit 1 naming %s once", code, errOut, path)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 17<<20); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = opsApp(t, "status", "--dir", dir)
	if code != exitError || strings.Count(errOut, path) != 1 || !strings.Contains(errOut, "more than the 16777216") {
		t.Errorf("status.json of 17 MiB: exit %d, %q; want exit 1 naming %s once", code, errOut, path)
	}
}
