package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDamagedDatabaseExitsWithAMessage: `run`, `stats`, `report`, `export`, `batch` and `ingest`
// on a database cut short, or with its pages overwritten, exit 1 with a message that names the
// file and says what to do; never a Go panic trace with exit code 2.
func TestDamagedDatabaseExitsWithAMessage(t *testing.T) {
	damages := map[string]func(t *testing.T, path string){
		"cut": func(t *testing.T, path string) {
			fi, err := os.Stat(path)
			must(t, err)
			must(t, os.Truncate(path, fi.Size()/2+100))
		},
		"pages": func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			must(t, err)
			defer f.Close()
			fi, err := f.Stat()
			must(t, err)
			junk := []byte(strings.Repeat("\xa5\x5a\x13\x37", 1024))
			for off := int64(8192); off < fi.Size(); off += 3 * 4096 {
				_, err := f.WriteAt(junk, off)
				must(t, err)
			}
		},
	}
	commands := [][]string{{"stats"}, {"report", "--out", "r.html"}, {"export", "--what", "rollouts"},
		{"batch"}, {"ingest"}, {"run"}}
	for name, damage := range damages {
		dir := t.TempDir()
		var b strings.Builder
		for i := range 20000 {
			b.WriteString(rolloutLine(fmt.Sprintf("r-%d", i), i))
		}
		must(t, os.MkdirAll(filepath.Join(dir, "rollouts"), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "rollouts", "a.jsonl"), []byte(b.String()), 0o644))
		ensureCatalog(t, dir)
		if out, err := execCommand([]string{"ingest", "--dir", dir}).CombinedOutput(); err != nil {
			t.Fatalf("ingest: %v\n%s", err, out)
		}
		db := filepath.Join(dir, "envsched.db")
		damage(t, db)
		for _, args := range commands {
			t.Run(name+"/"+args[0], func(t *testing.T) {
				cmd := execCommand(append(append([]string{}, args...), "--dir", dir))
				cmd.Dir = dir
				out, _ := cmd.CombinedOutput()
				code := cmd.ProcessState.ExitCode()
				s := string(out)
				if code != 1 || strings.Contains(s, "goroutine ") || strings.Contains(s, "panic:") ||
					!strings.Contains(s, db+" is damaged") || !strings.Contains(s, "restore it from a backup") {
					t.Errorf("exit %d; want 1 with a message naming %s and what to do, no panic:\n%s",
						code, db, tail(s, 3000))
				}
			})
		}
	}
}
