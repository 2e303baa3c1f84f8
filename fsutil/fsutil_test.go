package fsutil

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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

// The hooks run between the steps: before the rename the new contents sit complete in one
// temporary file and path still holds the old ones; after it path holds the new ones.
func TestWriteAtomicHooks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "batch.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	var steps []string
	h := Hooks{
		BeforeRename: func() {
			steps = append(steps, "before-rename")
			if got, _ := os.ReadFile(path); string(got) != "old" {
				t.Errorf("before the rename path holds %q; want old", got)
			}
			n := names(t, dir)
			if len(n) != 2 || !IsTemp(n[0]) {
				t.Fatalf("before the rename the folder holds %q; want one temporary file and batch.json", n)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, n[0])); string(got) != "new contents" {
				t.Errorf("temporary file holds %q", got)
			}
		},
		BeforeDirSync: func() {
			steps = append(steps, "before-dirsync")
			if got, _ := os.ReadFile(path); string(got) != "new contents" {
				t.Errorf("after the rename path holds %q", got)
			}
		},
	}
	fill := func(w io.Writer) error {
		_, err := io.WriteString(w, "new contents")
		return err
	}
	if err := WriteAtomic(path, 0o640, fill, h); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(steps, []string{"before-rename", "before-dirsync"}) {
		t.Fatalf("hooks ran %q", steps)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, %v; want 0640", st.Mode().Perm(), err)
	}
}

// A failing fill leaves path unchanged and no temporary file, and its error comes back; the
// hooks are not reached. Likewise when the fill of Replace fails after creating its file, or
// creates none.
func TestWriteAtomicFillFails(t *testing.T) {
	boom := errors.New("boom")
	hooks := Hooks{BeforeRename: func() { t.Error("BeforeRename after a failed fill") },
		BeforeDirSync: func() { t.Error("BeforeDirSync after a failed fill") }}
	cases := map[string]func(path string) error{
		"WriteAtomic": func(path string) error {
			return WriteAtomic(path, 0o644, func(w io.Writer) error {
				io.WriteString(w, "half")
				return boom
			}, hooks)
		},
		"Replace after creating": func(path string) error {
			return Replace(path, func(tmp string) error {
				os.WriteFile(tmp, []byte("half"), 0o644)
				return boom
			}, hooks)
		},
		"Replace creating nothing": func(path string) error {
			return Replace(path, func(string) error { return boom }, hooks)
		},
	}
	for name, write := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "export.csv")
			if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := write(path); !errors.Is(err, boom) {
				t.Fatalf("got %v; want the fill's error", err)
			}
			if got, _ := os.ReadFile(path); string(got) != "old" {
				t.Errorf("path holds %q; want old", got)
			}
			if n := names(t, dir); !slices.Equal(n, []string{"export.csv"}) {
				t.Errorf("folder holds %q; want only export.csv", n)
			}
		})
	}
}

// Replace renames the file its fill made into place, whatever made it.
func TestReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "envsched.db")
	var made string
	err := Replace(path, func(tmp string) error {
		made = tmp
		return os.WriteFile(tmp, []byte("compacted"), 0o600)
	}, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(made) != dir || !IsTemp(filepath.Base(made)) {
		t.Errorf("temporary path %s: want a temporary name beside the target", made)
	}
	if got, _ := os.ReadFile(path); string(got) != "compacted" {
		t.Errorf("path holds %q", got)
	}
	if n := names(t, dir); !slices.Equal(n, []string{"envsched.db"}) {
		t.Errorf("folder holds %q", n)
	}
}

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

// A prepared write leaves its target as it was (absent or old) until Publish, holds the whole
// new contents in a temporary file meanwhile, and leaves nothing behind once discarded.
func TestPrepareThenPublishOrDiscard(t *testing.T) {
	for _, tt := range []struct {
		name    string
		initial string // "": no file before
		publish bool
	}{
		{"new, published", "", true},
		{"replace, published", "old", true},
		{"new, discarded", "", false},
		{"replace, discarded", "old", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "b.json")
			if tt.initial != "" {
				if err := os.WriteFile(path, []byte(tt.initial), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p, err := Prepare(path, 0o644, writeString("new"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if tt.initial == "" && !errors.Is(err, fs.ErrNotExist) || tt.initial != "" && string(got) != tt.initial {
				t.Fatalf("before Publish the target holds %q (%v); want it unchanged", got, err)
			}
			all := names(t, dir)
			if tmp := slices.IndexFunc(all, IsTemp); tmp < 0 {
				t.Fatalf("no temporary file after Prepare: %v", all)
			} else if data, _ := os.ReadFile(filepath.Join(dir, all[tmp])); string(data) != "new" {
				t.Fatalf("temporary file holds %q, want the whole contents", data)
			}
			want := tt.initial
			if tt.publish {
				if err := p.Publish(Hooks{}); err != nil {
					t.Fatal(err)
				}
				want = "new"
			} else {
				p.Discard()
			}
			p.Discard() // a second call of either does nothing
			if err := p.Publish(Hooks{}); err != nil {
				t.Fatal(err)
			}
			got, _ = os.ReadFile(path)
			if string(got) != want {
				t.Errorf("target holds %q, want %q", got, want)
			}
			if slices.ContainsFunc(names(t, dir), IsTemp) {
				t.Errorf("temporary file left: %v", names(t, dir))
			}
		})
	}
}

// A failed fill leaves no temporary file and no Prepared; nil Prepared is safe to use.
func TestPrepareFillFails(t *testing.T) {
	dir := t.TempDir()
	boom := errors.New("boom")
	p, err := Prepare(filepath.Join(dir, "b.json"), 0o644, func(io.Writer) error { return boom })
	if !errors.Is(err, boom) || p != nil {
		t.Fatalf("Prepare = %v, %v; want nil and the fill's error", p, err)
	}
	if all := names(t, dir); len(all) != 0 {
		t.Errorf("left %v", all)
	}
	p.Discard()
	if err := p.Publish(Hooks{}); err != nil {
		t.Errorf("Publish of nil: %v", err)
	}
}

// TestWriteFilesAtomic: every file lands whole with its permissions and nothing temporary is
// left; a target taken by a folder fails alone, leaving the others written; a missing folder
// fails every file.
func TestWriteFilesAtomic(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "taken"), 0o755); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "old"), []byte("old contents"), 0o600))
	var files []File
	for i := range 100 {
		files = append(files, File{Name: fmt.Sprintf("f%d", i), Data: []byte(fmt.Sprintf("file %d\n", i))})
	}
	files = append(files, File{Name: "taken", Data: []byte("x")}, File{Name: "old", Data: []byte("new")})
	errs := WriteFilesAtomic(dir, files, 0o644)
	for i, f := range files {
		if f.Name == "taken" {
			if errs[i] == nil {
				t.Errorf("a folder at the target: no error")
			}
			continue
		}
		if errs[i] != nil {
			t.Errorf("%s: %v", f.Name, errs[i])
		}
		data, err := os.ReadFile(filepath.Join(dir, f.Name))
		fi, serr := os.Stat(filepath.Join(dir, f.Name))
		if err != nil || serr != nil || !bytes.Equal(data, f.Data) || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: %q, %v, %v; want %q, mode 0644", f.Name, data, err, fi.Mode(), f.Data)
		}
	}
	entries, err := os.ReadDir(dir)
	must(err)
	if len(entries) != len(files) {
		t.Errorf("%d entries in the folder; want %d (temporary files left?)", len(entries), len(files))
	}
	errs = WriteFilesAtomic(filepath.Join(dir, "missing"), files[:3], 0o644)
	for i, err := range errs {
		if err == nil {
			t.Errorf("file %d in a missing folder: no error", i)
		}
	}
}
