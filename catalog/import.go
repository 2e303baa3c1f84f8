package catalog

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

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
	// Replace lets the import replace a file of that name in DIR/catalog that holds other bytes
	// (an ExistsError otherwise). The same bytes imported again are never refused.
	Replace bool
	// OnTemp, when set, is told the temporary file's path in DIR/catalog before the copy is
	// written there, so that a command interrupted meanwhile can remove it (Import removes it
	// itself on any error).
	OnTemp func(tmp string)
}

// ExistsError: DIR/catalog already holds another file under the name an import would write.
// verl's datasets are all train.parquet: a second dataset imported under its base name replaced
// the first, whose tasks were then retired (never chosen again) without a word.
type ExistsError struct {
	Path string // the file in DIR/catalog
	Src  string
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s already exists and holds other bytes than %s (another dataset of the same file name?): "+
		"give --name to import it beside it, or --replace to replace it (the tasks only the old file lists are "+
		"then retired: never chosen again)", e.Path, e.Src)
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
// a running envsched reads it once, whole. What is checked is exactly what is written: the source
// is copied once into the temporary file, which is what is checked and then renamed into place,
// so memory does not grow with the file (a sparse 10 GB file was read into memory whole; a parquet
// file beyond the reader's bounds is refused before it is copied). A file
// with bad rows gives a *BadRowsError and writes nothing; a file that is not what its name says
// gives a *FileError; a file without tasks gives ErrNoTasks.
//
// src may be a symbolic link; what it leads to must be a regular file: a FIFO, a device
// (/dev/zero) or a folder is refused with a *fsutil.NotRegularError, never read or waited on.
func Import(src, dir string, opts ImportOptions) (*ImportResult, error) {
	format := FormatOf(src)
	if format != FormatJSONL && format != FormatParquet {
		return nil, fmt.Errorf("import %s: %w", src, ErrFormat)
	}
	in, err := openSource(src)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	if format == FormatParquet {
		// A parquet file beyond the reader's bounds (a sparse 10 GB file) is refused before it
		// is copied: the bounds are checked from its footer and page headers alone.
		st, err := in.Stat()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", src, err)
		}
		if err := guardParquet(in, st.Size()); err != nil {
			return nil, &FileError{Path: src, Reason: "not a readable parquet file: " + err.Error()}
		}
	}
	folder := filepath.Join(dir, CatalogDir)
	if fi, err := os.Lstat(folder); err == nil && !fi.IsDir() {
		// A link (to a folder outside DIR) is never read by envsched: the file would be
		// written there and its tasks never seen.
		return nil, fmt.Errorf("%s is a %s, not a folder: envsched reads no catalogue through it; make it a "+
			"real folder", folder, fsutil.TypeName(fi.Mode()))
	}
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", folder, err)
	}
	name := cmp.Or(opts.Name, filepath.Base(src))
	if err := checkName(name, -1); err != nil { // before anything is copied: a plain, read name
		return nil, err
	}
	var rep *Report
	path := filepath.Join(folder, name)
	err = fsutil.Replace(path, func(tmp string) error {
		if opts.OnTemp != nil {
			opts.OnTemp(tmp)
		}
		if err := copySource(tmp, in, src, format); err != nil {
			return err
		}
		var err error
		if rep, err = checkCopy(tmp, src, format, opts.SkipBad); err != nil {
			return err
		}
		switch {
		case len(rep.Bad) > 0 && !opts.SkipBad:
			return &BadRowsError{Path: src, Bad: rep.Bad}
		case len(rep.Rows) == 0:
			return fmt.Errorf("%s: %w", src, ErrNoTasks)
		case len(rep.Bad) > 0:
			return errGoodRowsOnly
		}
		if err := checkName(name, format); err != nil {
			return err
		}
		if !opts.Replace {
			if err := refuseOther(path, src, func() (io.Reader, error) { return os.Open(tmp) }); err != nil {
				return err
			}
		}
		return nil
	}, fsutil.Hooks{})
	var bad *BadRowsError
	switch {
	case errors.As(err, &bad) || errors.Is(err, ErrNoTasks):
		return &ImportResult{Report: rep}, err
	case errors.Is(err, errGoodRowsOnly):
		if path, err = writeGoodRows(folder, src, rep, opts); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err // fill's own error comes back as it was; a rename's names the path
	}
	return &ImportResult{Report: rep, Path: path, Rows: len(rep.Rows), Tasks: countTasks(rep), Envs: countEnvs(rep)}, nil
}

// refuseOther returns an *ExistsError when path exists and holds other bytes than open gives
// (anything but a regular file there counts as other).
func refuseOther(path, src string, open func() (io.Reader, error)) error {
	old, err := fsutil.OpenRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &ExistsError{Path: path, Src: src}
	}
	defer old.Close()
	r, err := open()
	if err != nil {
		return err
	}
	if c, ok := r.(io.Closer); ok {
		defer c.Close()
	}
	same, err := sameBytes(old, r)
	if err != nil {
		return fmt.Errorf("compare with %s: %w", path, err)
	}
	if !same {
		return &ExistsError{Path: path, Src: src}
	}
	return nil
}

// sameBytes reports whether a and b hold the same bytes.
func sameBytes(a, b io.Reader) (bool, error) {
	ba, bb := make([]byte, 1<<16), make([]byte, 1<<16)
	for {
		na, ea := io.ReadFull(a, ba)
		nb, eb := io.ReadFull(b, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		aEnd := errors.Is(ea, io.EOF) || errors.Is(ea, io.ErrUnexpectedEOF)
		bEnd := errors.Is(eb, io.EOF) || errors.Is(eb, io.ErrUnexpectedEOF)
		switch {
		case ea != nil && !aEnd:
			return false, ea
		case eb != nil && !bEnd:
			return false, eb
		case aEnd || bEnd:
			return aEnd == bEnd, nil
		}
	}
}

// errGoodRowsOnly: the source has bad rows and SkipBad, so its good rows are written instead.
var errGoodRowsOnly = errors.New("good rows only")

// openSource opens the file src leads to, when that is a regular file (see Import).
func openSource(src string) (*os.File, error) {
	real, err := filepath.EvalSymlinks(src)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", src, err)
	}
	f, err := fsutil.OpenRegular(real)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", src, err)
	}
	return f, nil
}

// copySource copies in (the source src) into the new file tmp, with a newline after a JSONL
// file's last line when it has none, and makes it durable.
func copySource(tmp string, in *os.File, src string, format Format) error {
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("create temporary file %s: %w", tmp, err)
	}
	lw := &lastByte{w: out}
	_, err = io.Copy(lw, in)
	if err != nil {
		err = fmt.Errorf("read %s: %w", src, err)
	}
	if err == nil && format == FormatJSONL && lw.n > 0 && lw.last != '\n' {
		_, err = out.Write([]byte{'\n'})
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	return err
}

// lastByte passes writes on to w and keeps the last byte written.
type lastByte struct {
	w    io.Writer
	n    int64
	last byte
}

func (l *lastByte) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	if n > 0 {
		l.n += int64(n)
		l.last = p[n-1]
	}
	return n, err
}

// checkCopy checks the copy tmp of the catalogue file src; keepLines keeps the good rows' lines
// of a parquet file (writeGoodRows writes them).
func checkCopy(tmp, src string, format Format, keepLines bool) (*Report, error) {
	f, err := os.Open(tmp)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if format == FormatJSONL {
		return CheckJSONL(f)
	}
	return parquetOf(f, src, keepLines)
}

// writeGoodRows writes the good rows of rep as JSON lines (NAME.jsonl, or opts.Name).
func writeGoodRows(folder, src string, rep *Report, opts ImportOptions) (string, error) {
	name := opts.Name
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(src), filepath.Ext(src)) + ".jsonl"
	}
	if err := checkName(name, FormatJSONL); err != nil {
		return "", err
	}
	var b bytes.Buffer
	for _, r := range rep.Rows {
		b.Write(r.Line)
		b.WriteByte('\n')
	}
	path := filepath.Join(folder, name)
	if !opts.Replace {
		if err := refuseOther(path, src, func() (io.Reader, error) { return bytes.NewReader(b.Bytes()), nil }); err != nil {
			return "", err
		}
	}
	if err := fsutil.WriteFileAtomic(path, b.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return path, nil
}

// checkName refuses names envsched would ignore or read in another format than f (any format
// when f is negative).
func checkName(name string, f Format) error {
	switch {
	case name != filepath.Base(name) || name == "." || name == "..":
		return fmt.Errorf("catalogue name %q must be a plain file name", name)
	case strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".tmp"):
		return fmt.Errorf("catalogue name %q starts with '.' or ends with .tmp: envsched would ignore it", name)
	case f >= 0 && FormatOf(name) != f:
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
