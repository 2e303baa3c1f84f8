package sim

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWriteCatalogIsProtocolJSONL(t *testing.T) {
	dir := t.TempDir()
	w := NewWorld(smallScenario(), 2)
	path, err := WriteCatalog(dir, w)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != len(w.Tasks) || !strings.Contains(lines[0], `"env":"sim-`) || !strings.Contains(lines[0], `"task_id":"t0000"`) {
		t.Fatalf("%d lines for %d tasks; first: %s", len(lines), len(w.Tasks), lines[0])
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "catalog", ".*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// answer plays a daemon that writes one fixed file into DIR/batches once the request appears,
// atomically as the real daemon does (a plain write could be read empty between its create and
// its write: the trainer polls every millisecond).
func answer(t *testing.T, dir, name, body string) {
	t.Helper()
	go func() {
		for range 2000 {
			if _, err := os.Stat(filepath.Join(dir, "requests", "step-000001.json")); err == nil {
				tmp := filepath.Join(dir, "batches", "."+name+".tmp")
				if os.WriteFile(tmp, []byte(body), 0o644) == nil {
					os.Rename(tmp, filepath.Join(dir, "batches", name))
				}
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
}

func TestDriveExchangeErrors(t *testing.T) {
	w := NewWorld(smallScenario(), 2)
	cases := []struct {
		name, file, body, want string
	}{
		{"refused", "step-000001.error.json", `{"id": "step-000001", "error": "size too large"}`, "size too large"},
		{"unknown task", "step-000001.json", `{"id": "step-000001", "policy": "x", "tasks": [{"env": "nope", "task_id": "1"}]}`, "not in the catalogue"},
		{"empty batch", "step-000001.json", `{"id": "step-000001", "policy": "x", "tasks": []}`, "no tasks"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, sub := range []string{"requests", "batches"} {
				os.MkdirAll(filepath.Join(dir, sub), 0o755)
			}
			answer(t, dir, c.file, c.body)
			_, err := DriveExchange(context.Background(), ExchangeConfig{Dir: dir, Steps: 1, BatchSize: 4, GroupSize: 8, Wait: 10 * time.Second}, w)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one that says %q", err, c.want)
			}
			if c.name == "refused" && !errors.Is(err, ErrBatchRefused) {
				t.Fatalf("error %v is not ErrBatchRefused", err)
			}
		})
	}
	_, err := DriveExchange(context.Background(), ExchangeConfig{Dir: t.TempDir(), Steps: 1, BatchSize: 4, GroupSize: 8, Wait: 50 * time.Millisecond}, w)
	if err == nil || !strings.Contains(err.Error(), "is envsched running") {
		t.Fatalf("no daemon: error %v", err)
	}
}
