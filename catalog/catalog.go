// Package catalog reads and checks catalogue files of the exchange directory: JSON lines
// (*.jsonl) and Parquet (*.parquet, such as verl's training files).
//
// A Parquet row is turned into the JSON object it stands for (nested groups become objects,
// lists become arrays) and read by record.ParseTask, so both formats follow the same key aliases
// of PROTOCOL.md: a verl row's env is data_source, its task id extra_info.index, its text the
// joined contents of the prompt chat list.
//
// Check reads a whole file and reports every bad row by its number (1-based: the line number of a
// JSON lines file, the row number of a Parquet file). ReadFile is the ingester's reader of
// non-JSONL catalogue files (ingest.Options.ReadCatalogFile).
package catalog

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/envsched/envsched/fsutil"
	"github.com/envsched/envsched/record"
)

// Format is the kind of a catalogue file, decided by its name's extension.
type Format int

// Formats of catalogue files.
const (
	FormatUnknown Format = iota
	FormatJSONL
	FormatParquet
)

func (f Format) String() string {
	switch f {
	case FormatJSONL:
		return "jsonl"
	case FormatParquet:
		return "parquet"
	default:
		return "unknown"
	}
}

// ErrFormat means a file's name ends in neither .jsonl nor .parquet.
var ErrFormat = errors.New("catalogue files must end in .jsonl or .parquet")

// FormatOf returns the format of a file by its extension (case-insensitive).
func FormatOf(path string) Format {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl":
		return FormatJSONL
	case ".parquet":
		return FormatParquet
	default:
		return FormatUnknown
	}
}

// Row is one good row of a catalogue file.
type Row struct {
	N    int // 1-based row (or line) number in the file
	Task record.Task
	Line []byte // the row as one JSON object without newline (for a JSONL file, its bytes as read)
}

// BadRow is a row that cannot become a task.
type BadRow struct {
	N      int    // 1-based row (or line) number in the file
	Reason string // a record.BadLineError reason ("missing task", "invalid JSON", ...)
}

func (b BadRow) String() string { return fmt.Sprintf("row %d: %s", b.N, b.Reason) }

// Report is what Check found in a whole file.
type Report struct {
	Format Format
	Rows   []Row    // the good rows, in file order
	Bad    []BadRow // the bad rows, in file order
	Blank  int      // blank lines of a JSONL file (skipped; neither rows nor faults)

	dropLines bool // Rows keep no Line (a parquet file read for the ingester)
}

// Tasks returns the tasks of the good rows.
func (r *Report) Tasks() []record.Task {
	out := make([]record.Task, len(r.Rows))
	for i, row := range r.Rows {
		out[i] = row.Task
	}
	return out
}

// FileError says that a whole file cannot be read as a catalogue (not Parquet, a column that
// cannot be decoded, ...). It unwraps to a *record.BadLineError, so that the ingester quarantines
// the file and goes on.
type FileError struct {
	Path   string
	Reason string
	stray  bool // not a catalogue's name (notes.txt): no catalogue to read
}

// Unreadable reports whether the file could not be read as the catalogue its name says (a
// .parquet file that is not one, or beyond the reader's bounds, ...), rather than being a stray
// file of another name: the ingester then retires none of the tasks it listed while the file
// stays so (PROTOCOL.md section 3), where it took the file for one that lists none and retired
// every task it listed.
func (e *FileError) Unreadable() bool { return !e.stray }

func (e *FileError) Error() string {
	if e.Path == "" {
		return "catalogue: " + e.Reason
	}
	return fmt.Sprintf("catalogue %s: %s", e.Path, e.Reason)
}

// Unwrap returns the *record.BadLineError the ingester quarantines the file with.
func (e *FileError) Unwrap() error { return &record.BadLineError{Reason: e.Reason} }

// Check reads the whole file at path and sorts its rows into good and bad. An error is returned
// only when the file as a whole cannot be read: a *FileError for a file that is not what its name
// says, ErrFormat for an unknown extension, another error for I/O.
func Check(path string) (*Report, error) {
	switch FormatOf(path) {
	case FormatJSONL:
		return checkJSONL(path)
	case FormatParquet:
		return checkParquet(path)
	default:
		return nil, fmt.Errorf("check %s: %w", path, ErrFormat)
	}
}

// ReadFile reads a catalogue file for the ingester (ingest.Options.ReadCatalogFile). It returns
// the tasks of the good rows. When some rows are bad it returns them too, with a
// *record.BadLineError whose reason names the bad rows (the ingester quarantines that once and
// stores the good rows). A file that cannot be read as a catalogue gives no tasks and a
// *FileError (a *record.BadLineError too): nothing of it is stored. So does a file whose name
// ends in neither .jsonl nor .parquet (a stray notes.txt).
//
// The daemon calls it on files of the exchange directory: only a regular file is opened, never
// through a symbolic link and never with a blocking open (fsutil.OpenRegular); anything else (a
// FIFO put there under a catalogue's name) is a *FileError.
func ReadFile(path string) ([]record.Task, error) {
	rep, err := checkRegular(path)
	if errors.Is(err, ErrFormat) { // a stray file (notes.txt): quarantined, never a stop
		return nil, &FileError{Path: path, Reason: "not a catalogue file: " + ErrFormat.Error() +
			"; move it out of the catalog folder", stray: true}
	}
	if err != nil {
		return nil, err
	}
	if len(rep.Bad) > 0 {
		return rep.Tasks(), &record.BadLineError{Reason: BadRowsSummary(rep.Bad, 5)}
	}
	return rep.Tasks(), nil
}

// BadRowsSummary describes bad rows in one line, naming at most max of them:
// "2 bad rows: row 3: missing env; row 17: missing task".
func BadRowsSummary(bad []BadRow, max int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d bad row", len(bad))
	if len(bad) != 1 {
		b.WriteString("s")
	}
	for i, r := range bad {
		if i == max {
			fmt.Fprintf(&b, "; and %d more", len(bad)-max)
			break
		}
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(r.String())
	}
	return b.String()
}

// checkRegular is Check for a file of the exchange directory (see ReadFile).
func checkRegular(path string) (*Report, error) {
	format := FormatOf(path)
	if format != FormatJSONL && format != FormatParquet {
		return nil, fmt.Errorf("check %s: %w", path, ErrFormat)
	}
	f, err := fsutil.OpenRegular(path)
	if fsutil.IsNotRegular(err) {
		return nil, &FileError{Path: path, Reason: err.Error()}
	}
	if err != nil {
		return nil, fmt.Errorf("open catalogue %s: %w", path, err)
	}
	defer f.Close()
	if format == FormatJSONL {
		rep, err := CheckJSONL(f)
		if err != nil {
			return nil, fmt.Errorf("read catalogue %s: %w", path, err)
		}
		return rep, nil
	}
	return parquetOf(f, path, false)
}
