package catalog_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/envsched/envsched/catalog"
)

// TestImportKeepsAnotherFileOfTheSameName: verl's datasets are all train.parquet, and a second
// dataset imported under its base name replaced the first in DIR/catalog without a word, which
// retired every task of the first (never chosen again). An import now refuses a name that holds
// other bytes (an *ExistsError, the file and folder as they were) unless Replace; the same bytes
// imported again are no change and pass. So does the JSON lines file --skip-bad writes.
func TestImportKeepsAnotherFileOfTheSameName(t *testing.T) {
	gsm := writeParquet(t, t.TempDir(), "train.parquet", verlRows(10))
	mathRows := verlRows(12)
	for i := range mathRows {
		mathRows[i].DataSource = ptr("math")
	}
	math := writeParquet(t, t.TempDir(), "train.parquet", mathRows)
	dir := t.TempDir()
	target := filepath.Join(dir, "catalog", "train.parquet")

	if _, err := catalog.Import(gsm, dir, catalog.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(target)
	if _, err := catalog.Import(gsm, dir, catalog.ImportOptions{}); err != nil {
		t.Fatalf("the same file again: %v", err)
	}
	_, err := catalog.Import(math, dir, catalog.ImportOptions{})
	var ex *catalog.ExistsError
	if !errors.As(err, &ex) || ex.Path != target {
		t.Fatalf("another train.parquet: %v; want an ExistsError naming %s", err, target)
	}
	if now, _ := os.ReadFile(target); string(now) != string(first) {
		t.Fatal("the first dataset's file was replaced")
	}
	if names := listDir(t, filepath.Join(dir, "catalog")); !reflect.DeepEqual(names, []string{"train.parquet"}) {
		t.Errorf("catalog folder holds %v", names)
	}
	if _, err := catalog.Import(math, dir, catalog.ImportOptions{Name: "math.parquet"}); err != nil {
		t.Fatalf("beside it with --name: %v", err)
	}
	if _, err := catalog.Import(math, dir, catalog.ImportOptions{Replace: true}); err != nil {
		t.Fatalf("--replace: %v", err)
	}
	if now, _ := os.ReadFile(target); string(now) == string(first) {
		t.Fatal("--replace left the first file")
	}

	// --skip-bad writes NAME.jsonl: another file there is kept too.
	bad := verlRows(5)
	bad[2].DataSource = nil
	src := writeParquet(t, t.TempDir(), "other.parquet", bad)
	jsonl := filepath.Join(dir, "catalog", "other.jsonl")
	if err := os.WriteFile(jsonl, []byte(`{"env":"keep","task":"me"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := catalog.Import(src, dir, catalog.ImportOptions{SkipBad: true}); !errors.As(err, &ex) {
		t.Fatalf("--skip-bad over another other.jsonl: %v; want an ExistsError", err)
	}
	if _, err := catalog.Import(src, dir, catalog.ImportOptions{SkipBad: true, Replace: true}); err != nil {
		t.Fatalf("--skip-bad --replace: %v", err)
	}
}
