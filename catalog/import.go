package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/envsched/envsched/fsutil"
)

// CatalogDir is the exchange directory's catalogue folder.
const CatalogDir = "catalog"

// ErrNoTasks means a file to import has no good row.
var ErrNoTasks = errors.New("no tasks")

// BadRowsError says that a file to import has bad rows; nothing was written.
type BadRowsError struct {
	Path string
	Bad  []BadRow
}

func (e *BadRowsError) Error() string {
	return fmt.Sprintf("%s: %s; fix them, or import only the good rows with --skip-bad",
		e.Path, BadRowsSummary(e.Bad, 3))
}

// ImportOptions change what Import writes.
type ImportOptions struct {
	// SkipBad writes only the good rows, as JSON lines (NAME.jsonl), instead of refusing a file
	// with bad rows.
	SkipBad bool
	// Name is the file name in DIR/catalog; empty means the source's base name (with .jsonl when
	// SkipBad had rows to drop from a parquet file).
	Name string
}

// ImportResult is what Import did.
type ImportResult struct {
	Report *Report // the check of the source
	Path   string  // the file written
	Rows   int     // good rows written
	Tasks  int     // distinct tasks among them (a task named again is one task)
	Envs   int     // distinct environments among them
}

// Import checks the catalogue file src whole and, when every row is good (or opts.SkipBad),
// writes it into DIR/catalog atomically (a temporary file, fsync, rename, folder fsync), so that
// a running envsched reads it once, whole. What is checked is exactly what is written: the file
// is read once. A file with bad rows gives a *BadRowsError and writes nothing; a file that is not
// what its name says gives a *FileError; a file without tasks gives ErrNoTasks.
//
// src may be a symbolic link; what it leads to must be a regular file: a FIFO, a device
// (/dev/zero) or a folder is refused with a *fsutil.NotRegularError, never read or waited on.
func Import(src, dir string, opts ImportOptions) (*ImportResult, error) {
	data, err := readSource(src)
	if err != nil {
		return nil, err
	}
	rep, err := checkBytes(src, data)
	if err != nil {
		return nil, err
	}
	if len(rep.Bad) > 0 && !opts.SkipBad {
		return &ImportResult{Report: rep}, &BadRowsError{Path: src, Bad: rep.Bad}
	}
	if len(rep.Rows) == 0 {
		return &ImportResult{Report: rep}, fmt.Errorf("%s: %w", src, ErrNoTasks)
	}
	name, out := importBody(src, data, rep, opts)
	if err := checkName(name, written(rep)); err != nil {
		return nil, err
	}
	folder := filepath.Join(dir, CatalogDir)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", folder, err)
	}
	path := filepath.Join(folder, name)
	if err := fsutil.WriteFileAtomic(path, out, 0o644); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &ImportResult{Report: rep, Path: path, Rows: len(rep.Rows), Tasks: countTasks(rep), Envs: countEnvs(rep)}, nil
}

// readSource reads the file src leads to, when that is a regular file (see Import).
func readSource(src string) ([]byte, error) {
	real, err := filepath.EvalSymlinks(src)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", src, err)
	}
	data, err := fsutil.ReadRegular(real)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", src, err)
	}
	return data, nil
}

// checkBytes checks data as the catalogue file src.
func checkBytes(src string, data []byte) (*Report, error) {
	switch FormatOf(src) {
	case FormatJSONL:
		return CheckJSONL(bytes.NewReader(data))
	case FormatParquet:
		rep, err := CheckParquet(bytes.NewReader(data), int64(len(data)))
		var fe *FileError
		if errors.As(err, &fe) {
			fe.Path = src
		}
		return rep, err
	default:
		return nil, fmt.Errorf("import %s: %w", src, ErrFormat)
	}
}

// importBody returns the name and bytes to write: the source as it is (a JSONL file's last line
// ended with a newline), or the good rows as JSON lines when rows were skipped.
func importBody(src string, data []byte, rep *Report, opts ImportOptions) (string, []byte) {
	name := opts.Name
	if len(rep.Bad) == 0 {
		if name == "" {
			name = filepath.Base(src)
		}
		if rep.Format == FormatJSONL && len(data) > 0 && data[len(data)-1] != '\n' {
			data = append(data[:len(data):len(data)], '\n')
		}
		return name, data
	}
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(src), filepath.Ext(src)) + ".jsonl"
	}
	var b bytes.Buffer
	for _, r := range rep.Rows {
		b.Write(r.Line)
		b.WriteByte('\n')
	}
	return name, b.Bytes()
}

// written is the format Import writes: the source's, or JSON lines when rows were dropped.
func written(rep *Report) Format {
	if len(rep.Bad) > 0 {
		return FormatJSONL
	}
	return rep.Format
}

// checkName refuses names envsched would ignore or read in another format than f.
func checkName(name string, f Format) error {
	switch {
	case name != filepath.Base(name) || name == "." || name == "..":
		return fmt.Errorf("catalogue name %q must be a plain file name", name)
	case strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".tmp"):
		return fmt.Errorf("catalogue name %q starts with '.' or ends with .tmp: envsched would ignore it", name)
	case FormatOf(name) != f:
		return fmt.Errorf("catalogue name %q: the file written is %s, so the name must end in .%s", name, f, f)
	}
	return nil
}

func countTasks(rep *Report) int {
	tasks := map[[2]string]struct{}{}
	for _, r := range rep.Rows {
		tasks[[2]string{r.Task.Env, r.Task.Task}] = struct{}{}
	}
	return len(tasks)
}

func countEnvs(rep *Report) int {
	envs := map[string]struct{}{}
	for _, r := range rep.Rows {
		envs[r.Task.Env] = struct{}{}
	}
	return len(envs)
}
