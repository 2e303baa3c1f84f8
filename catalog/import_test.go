package catalog_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/envsched/envsched/catalog"
	"github.com/envsched/envsched/fsutil"
	"github.com/envsched/envsched/record"
)

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestImportJSONL(t *testing.T) {
	src := filepath.Join(t.TempDir(), "tasks.jsonl")
	body := "{\"env\":\"a\",\"task_id\":\"1\"}\n{\"env\":\"b\",\"task_id\":2}" // no final newline
	os.WriteFile(src, []byte(body), 0o644)
	dir := t.TempDir()

	res, err := catalog.Import(src, dir, catalog.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "catalog", "tasks.jsonl"))
	if string(got) != body+"\n" {
		t.Errorf("copied %q, want the source with its last line ended", got)
	}
	if res.Tasks != 2 || res.Envs != 2 {
		t.Errorf("result %+v, want 2 tasks in 2 envs", res)
	}
	if names := listDir(t, filepath.Join(dir, "catalog")); !reflect.DeepEqual(names, []string{"tasks.jsonl"}) {
		t.Errorf("catalog folder holds %v: a temporary file was left", names)
	}
}

func TestImportRefusesBadRows(t *testing.T) {
	src := filepath.Join(t.TempDir(), "tasks.jsonl")
	os.WriteFile(src, []byte("{\"env\":\"a\",\"task_id\":\"1\"}\n{\"env\":\"a\"}\n"), 0o644)
	dir := t.TempDir()

	_, err := catalog.Import(src, dir, catalog.ImportOptions{})
	var bre *catalog.BadRowsError
	if !errors.As(err, &bre) || !reflect.DeepEqual(bre.Bad, []catalog.BadRow{{N: 2, Reason: record.ReasonMissingTask}}) {
		t.Fatalf("err = %v, want row 2 missing task", err)
	}
	if !strings.Contains(err.Error(), "row 2: missing task") {
		t.Errorf("message %q does not name the row", err)
	}
	if names := listDir(t, filepath.Join(dir, "catalog")); len(names) != 0 {
		t.Errorf("a refused import wrote %v", names)
	}
}

func TestImportParquetSkipBad(t *testing.T) {
	rows := verlRows(10)
	rows[4].DataSource = nil
	src := writeParquet(t, t.TempDir(), "train.parquet", rows)
	dir := t.TempDir()

	res, err := catalog.Import(src, dir, catalog.ImportOptions{SkipBad: true})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(res.Path) != "train.jsonl" || res.Tasks != 9 {
		t.Fatalf("wrote %s with %d tasks, want train.jsonl with 9", res.Path, res.Tasks)
	}
	// The JSON lines written read back as the same tasks as the good parquet rows.
	back, err := catalog.Check(res.Path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Tasks(), res.Report.Tasks()) || len(back.Bad) != 0 {
		t.Errorf("written rows read back as %v (bad %v)", back.Tasks(), back.Bad)
	}
}

func TestImportParquetWhole(t *testing.T) {
	src := writeParquet(t, t.TempDir(), "train.parquet", verlRows(10))
	dir := t.TempDir()
	res, err := catalog.Import(src, dir, catalog.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(src)
	b, _ := os.ReadFile(res.Path)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the parquet file was not copied byte for byte")
	}
}

func TestImportBadNamesAndFiles(t *testing.T) {
	srcDir := t.TempDir()
	good := filepath.Join(srcDir, "ok.jsonl")
	os.WriteFile(good, []byte("{\"env\":\"a\",\"task_id\":\"1\"}\n"), 0o644)
	notPQ := filepath.Join(srcDir, "x.parquet")
	os.WriteFile(notPQ, []byte("hello"), 0o644)
	empty := filepath.Join(srcDir, "empty.jsonl")
	os.WriteFile(empty, []byte("\n\n"), 0o644)
	dir := t.TempDir()
	cases := []struct {
		name, src string
		opts      catalog.ImportOptions
		want      string
	}{
		{"hidden name", good, catalog.ImportOptions{Name: ".x.jsonl"}, "would ignore"},
		{"path as name", good, catalog.ImportOptions{Name: "../x.jsonl"}, "plain file name"},
		{"format mismatch", good, catalog.ImportOptions{Name: "x.parquet"}, "must end in .jsonl"},
		{"not parquet", notPQ, catalog.ImportOptions{}, "not a parquet file"},
		{"no tasks", empty, catalog.ImportOptions{}, "no tasks"},
		{"unknown extension", filepath.Join(srcDir, "ok.jsonl"), catalog.ImportOptions{Name: "x.csv"}, "must end in .jsonl"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := catalog.Import(c.src, dir, c.opts)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one that says %q", err, c.want)
			}
		})
	}
	if names := listDir(t, filepath.Join(dir, "catalog")); len(names) != 0 {
		t.Errorf("failed imports wrote %v", names)
	}
}

// TestImportRefusesWhatIsNotARegularFile: `catalog import` reads only a regular file (through a
// link or not). A device behind a catalogue's name was read as an empty file (and /dev/zero
// until memory ran out); a FIFO blocked the command for ever. Each is refused at once, naming
// its type, and nothing is written.
func TestImportRefusesWhatIsNotARegularFile(t *testing.T) {
	src := t.TempDir()
	dir := t.TempDir()
	fifo := filepath.Join(src, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"null.jsonl": os.DevNull, "folder.jsonl": src} {
		if err := os.Symlink(target, filepath.Join(src, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"null.jsonl", "folder.jsonl", "fifo.jsonl"} { // not /dev/zero: it would fill memory on a regression
		done := make(chan error, 1)
		go func() {
			_, err := catalog.Import(filepath.Join(src, name), dir, catalog.ImportOptions{})
			done <- err
		}()
		var err error
		select {
		case err = <-done:
		case <-time.After(time.Minute): // a hang, not a slow import
			t.Fatalf("%s: import still waiting after a minute", name)
		}
		if !fsutil.IsNotRegular(err) {
			t.Errorf("%s: %v; want a refusal as not a regular file", name, err)
		}
	}
	if names := listDir(t, filepath.Join(dir, "catalog")); len(names) != 0 {
		t.Errorf("catalog folder holds %v; want nothing written", names)
	}

	// A link to a regular file is the user's file: imported.
	real := filepath.Join(src, "real.jsonl")
	os.WriteFile(real, []byte(`{"env":"a","task_id":1}`+"\n"), 0o644)
	if err := os.Symlink(real, filepath.Join(src, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	if _, err := catalog.Import(filepath.Join(src, "link.jsonl"), dir, catalog.ImportOptions{}); err != nil {
		t.Errorf("link to a regular file: %v", err)
	}
}

// TestImportCountsDistinctTasks: rows that name a task again are one task (the last row wins),
// and the result says so instead of counting rows as tasks.
func TestImportCountsDistinctTasks(t *testing.T) {
	src := filepath.Join(t.TempDir(), "dup.jsonl")
	os.WriteFile(src, []byte(`{"env":"a","task_id":1}`+"\n"+`{"env":"a","task_id":"1","text":"again"}`+"\n"+
		`{"env":"a","task_id":1.0}`+"\n"+`{"env":"b","task_id":1}`+"\n"), 0o644)
	res, err := catalog.Import(src, t.TempDir(), catalog.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 4 || res.Tasks != 2 || res.Envs != 2 {
		t.Errorf("rows %d, tasks %d, envs %d; want 4 rows of 2 tasks in 2 envs", res.Rows, res.Tasks, res.Envs)
	}
}

// TestImportSparseFileIsNotReadIntoMemory: `catalog import` read the whole source into memory
// first, so a sparse 10 GB file named .parquet killed it ("fatal error: out of memory" and a
// stack dump). Now a parquet file is refused from its footer, and a source is copied into the
// temporary file that is checked, never held whole; nothing is left in DIR/catalog.
func TestImportSparseFileIsNotReadIntoMemory(t *testing.T) {
	src := filepath.Join(t.TempDir(), "big.parquet")
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	dir := t.TempDir()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = catalog.Import(src, dir, catalog.ImportOptions{})
	runtime.ReadMemStats(&after)
	var fe *catalog.FileError
	if !errors.As(err, &fe) || !strings.Contains(fe.Reason, "parquet") {
		t.Fatalf("import of a sparse 1 GiB file: %v; want a *FileError about parquet", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("import allocated %d MiB for a file it refuses; want a few", grew>>20)
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "catalog")); len(left) != 0 {
		t.Errorf("left in DIR/catalog: %v", left)
	}
}

// spaces reads n spaces without holding them.
type spaces struct{ n int64 }

func (s *spaces) Read(p []byte) (int, error) {
	if s.n <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), s.n)
	for i := range p[:k] {
		p[i] = ' '
	}
	s.n -= k
	return int(k), nil
}

// TestCheckJSONLLongLineIsNotHeld: a JSON lines catalogue's line was read whole however long
// (`catalog import` of a 2 GB sparse file: 4.2 GB resident). A line longer than record.MaxLine
// is now a bad row, skipped to its newline without being held, and the rows after it count.
func TestCheckJSONLLongLineIsNotHeld(t *testing.T) {
	r := io.MultiReader(&spaces{n: 256 << 20}, strings.NewReader("\n"+`{"env":"e","task_id":"t"}`+"\n"))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rep, err := catalog.CheckJSONL(r)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Bad) != 1 || rep.Bad[0].N != 1 || rep.Bad[0].Reason != record.ReasonTooLong || len(rep.Rows) != 1 || rep.Rows[0].N != 2 {
		t.Fatalf("bad %+v rows %+v; want row 1 too long and row 2 good", rep.Bad, rep.Rows)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 128<<20 {
		t.Errorf("checking a 256 MiB line allocated %d MiB; want it never held whole", grew>>20)
	}
}
