package watch

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPathLongerThanPathMaxIsSkipped: folders nested past PATH_MAX under a root neither stop the
// watcher from starting nor from polling; the changes elsewhere are reported.
func TestPathLongerThanPathMaxIsSkipped(t *testing.T) {
	for _, poll := range []bool{false, true} {
		t.Run(map[bool]string{false: "notify", true: "poll"}[poll], func(t *testing.T) {
			dir := t.TempDir()
			for _, sub := range []string{"rollouts", "requests"} {
				if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			nest(t, filepath.Join(dir, "rollouts"), 2500) // 2 bytes a level: past 4096 at 2048
			h := startIn(t, dir, Options{Poll: poll})
			p := h.path("rollouts/after.jsonl")
			if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			h.waitPaths(p)
		})
	}
}

// TestRemovedRootIsSkipped: a root removed while watching makes the poll skip it, not fail (a
// failing poll asked for a full rescan at every tick); when it is made again its files are seen.
func TestRemovedRootIsSkipped(t *testing.T) {
	h := start(t, Options{Poll: true})
	if err := os.RemoveAll(h.path("requests")); err != nil {
		t.Fatal(err)
	}
	p := h.path("rollouts/a.jsonl")
	if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.waitPaths(p)
	if err := os.Mkdir(h.path("requests"), 0o755); err != nil {
		t.Fatal(err)
	}
	q := h.path("requests/r.json")
	if err := os.WriteFile(q, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.waitPaths(q)
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.rescans) > 0 {
		t.Fatalf("rescans asked for %q; a removed root is no reason for one", h.rescans)
	}
}

// nest makes depth nested folders "d" under root with relative mkdirs (a path that long cannot
// be named whole).
func nest(t *testing.T, root string, depth int) {
	t.Helper()
	wd, err := os.Open(".")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := wd.Chdir(); err != nil {
			panic(err)
		}
		wd.Close()
	}()
	if err := os.Chdir(root); err != nil {
		t.Fatal(err)
	}
	for range depth {
		if err := os.Mkdir("d", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chdir("d"); err != nil {
			t.Fatal(err)
		}
	}
}
