package catalog_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/envsched/envsched/catalog"
	"github.com/envsched/envsched/ingest"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// ingestDir scans the exchange directory dir into a fresh database with catalog.ReadFile as the
// reader of parquet catalogues, and returns the stored tasks (sorted) and counters.
func ingestDir(t *testing.T, dir string) ([]storage.TaskInfo, storage.Counters) {
	t.Helper()
	db, err := storage.Open(filepath.Join(dir, "envsched.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		storagetest.MustCheck(t, db, dir)
		db.Close()
	}()
	in, err := ingest.New(db, dir, ingest.Options{ReadCatalogFile: catalog.ReadFile})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Scan(context.Background()); err != nil {
		t.Fatalf("scan: %v", err)
	}
	var tasks []storage.TaskInfo
	var counters storage.Counters
	err = db.View(func(r *storage.Reader) error {
		if err := r.Tasks(true, func(ti storage.TaskInfo) error { tasks = append(tasks, ti); return nil }); err != nil {
			return err
		}
		counters, err = r.Counters()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].Seq < tasks[j].Seq })
	return tasks, counters
}

func TestIngestParquetCatalogue(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "catalog"), 0o755)
	writeParquet(t, filepath.Join(dir, "catalog"), "train.parquet", verlRows(40))

	tasks, c := ingestDir(t, dir)
	if len(tasks) != 40 || c.Quarantined != 0 {
		t.Fatalf("%d tasks, %d quarantined; want 40 and 0", len(tasks), c.Quarantined)
	}
	byKey := map[string]storage.TaskInfo{}
	envs := map[string]int{}
	for _, ti := range tasks {
		byKey[ti.Env+"/"+ti.Task.Task] = ti
		envs[ti.Env]++
		if !ti.InCatalog {
			t.Errorf("%s/%s not marked as in the catalogue", ti.Env, ti.Task.Task)
		}
	}
	if envs["gsm8k"] != 20 || envs["math"] != 20 {
		t.Errorf("envs = %v, want 20 gsm8k and 20 math", envs)
	}
	if ti, ok := byKey["math/7"]; !ok || ti.Text != "You are a careful solver.\nQuestion H?" {
		t.Errorf("math/7 = %+v (found %v)", ti.Task, ok)
	}
}

func TestIngestBadParquetChangesNothing(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "catalog"), 0o755)
	os.WriteFile(filepath.Join(dir, "catalog", "broken.parquet"), []byte("PAR1 this is not parquet"), 0o644)

	tasks, c := ingestDir(t, dir)
	if len(tasks) != 0 {
		t.Errorf("a bad parquet file added %d tasks", len(tasks))
	}
	if c.Quarantined != 1 {
		t.Errorf("quarantined = %d, want 1 (the file)", c.Quarantined)
	}
}
