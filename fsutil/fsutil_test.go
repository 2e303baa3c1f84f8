package fsutil

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestWriteFileAtomic(t *testing.T) {
	tests := []struct {
		name    string
		initial []byte // nil: no file before
		data    []byte
		perm    os.FileMode
	}{
		{"new file", nil, []byte(`{"id":"step-1"}`), 0o644},
		{"replace", []byte("old contents that are longer"), []byte("new"), 0o644},
		{"empty data", []byte("old"), nil, 0o600},
		{"private", nil, []byte("secret"), 0o600},
		{"wider than umask", nil, []byte("x"), 0o666},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "batch.json")
			if tt.initial != nil {
				if err := os.WriteFile(path, tt.initial, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := WriteFileAtomic(path, tt.data, tt.perm); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != string(tt.data) {
				t.Fatalf("read back %q, %v; want %q", got, err, tt.data)
			}
			st, err := os.Stat(path)
			if err != nil || st.Mode().Perm() != tt.perm {
				t.Fatalf("mode %v, %v; want %v", st.Mode().Perm(), err, tt.perm)
			}
			if n := names(t, dir); !slices.Equal(n, []string{"batch.json"}) {
				t.Fatalf("folder holds %q; want only batch.json", n)
			}
		})
	}
}

func TestWriteFileAtomicRelativePath(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := WriteFileAtomic("status.json", []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile("status.json"); err != nil || string(got) != "{}" {
		t.Fatalf("read back %q, %v", got, err)
	}
}

func TestWriteFileAtomicMissingFolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent", "batch.json")
	err := WriteFileAtomic(path, []byte("x"), 0o644)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("got %v; want an error that is fs.ErrNotExist", err)
	}
}

// TestWriteFileAtomicRenameFails: when the target is a folder the rename fails; the folder is
// unchanged and no temporary file is left.
func TestWriteFileAtomicRenameFails(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "taken")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "keep"), []byte("k"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(target, []byte("x"), 0o644); err == nil {
		t.Fatal("no error writing over a non-empty folder")
	}
	if n := names(t, dir); !slices.Equal(n, []string{"taken"}) {
		t.Fatalf("folder holds %q; want only taken", n)
	}
}

func TestIsTemp(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{TempName("batch.json", "0123abcd"), true},
		{".status.json.tmp-1", true},
		{".a.tmp-x", true},
		{"batch.json", false},
		{".hidden", false},
		{"batch.json.tmp-1", false}, // no leading dot: not ours
		{".batch.json.tmp-", false}, // no suffix
		{"..tmp-x", false},          // no target name
		{".tmp-x", false},
		{".x.tmp", false}, // a trainer's own .NAME.tmp: not ours
	}
	for _, tt := range tests {
		if got := IsTemp(tt.name); got != tt.want {
			t.Errorf("IsTemp(%q) = %v; want %v", tt.name, got, tt.want)
		}
	}
}

func TestSweepTemp(t *testing.T) {
	dir := t.TempDir()
	files := []string{
		"batch.json", ".batch.json.tmp-0123", ".status.json.tmp-ff", ".x.tmp", ".hidden", "y.tmp",
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, ".sub.tmp-1"), 0o755); err != nil { // a folder: left alone
		t.Fatal(err)
	}
	removed, err := SweepTemp(dir)
	if err != nil || removed != 2 {
		t.Fatalf("SweepTemp = %d, %v; want 2, nil", removed, err)
	}
	want := []string{".hidden", ".sub.tmp-1", ".x.tmp", "batch.json", "y.tmp"}
	if n := names(t, dir); !slices.Equal(n, want) {
		t.Fatalf("folder holds %q; want %q", n, want)
	}
	if removed, err := SweepTemp(dir); err != nil || removed != 0 {
		t.Fatalf("second SweepTemp = %d, %v; want 0, nil", removed, err)
	}
}

func TestSweepTempMissingFolder(t *testing.T) {
	if _, err := SweepTemp(filepath.Join(t.TempDir(), "absent")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("got %v; want fs.ErrNotExist", err)
	}
}

func TestSyncDir(t *testing.T) {
	if err := SyncDir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(filepath.Join(t.TempDir(), "absent")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("got %v; want fs.ErrNotExist", err)
	}
}
