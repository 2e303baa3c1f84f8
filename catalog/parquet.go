package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"

	"github.com/envsched/envsched/record"
)

// parquetChunk is how many rows are decoded at a time.
const parquetChunk = 256

// The bounds on what one Parquet file decodes into, checked row by row as it is read: run-length
// and delta encoding let a file of a few hundred bytes stand for millions of rows (10,000,000
// rows in 460 KB were decoded and held whole: 11 GB for 116 s). Two budgets:
//   - the work: the JSON the rows decode into, plus parquetValueCost a value decoded (columns
//     that are not read included) and parquetRowCost a row, at most maxParquetRatio times the
//     file's size (at least parquetWorkFloor): a row too long to keep is decoded all the same, a
//     value millions of rows share is cheap to store and dear to decode, and a column of 4,096
//     zeros a row that no task reads made a 776 KB file of 100,000 rows take 19 s of CPU;
//   - what is held until the file is read whole: the good rows' tasks (names, text, tools, tags,
//     8 bytes an embedding value, the JSON line when kept) and the bad rows, plus parquetRowCost
//     a row, within the work's budget and at most maxParquetHeld (a million rows of 1.5 KB texts
//     fit; the process holds about 1.1 times it).
//
// A catalogue beyond them is written as JSON lines (read as a stream) or split into files.
const (
	parquetRowCost   = 64
	parquetValueCost = 16
	maxParquetRatio  = 256
	parquetWorkFloor = 64 << 20
	maxParquetHeld   = 2 << 30
)

// parquetWorkLimit and parquetHeldLimit are the budgets of a Parquet file of size bytes.
func parquetWorkLimit(size int64) int64 {
	return max(parquetWorkFloor, maxParquetRatio*max(size, 0))
}

func parquetHeldLimit(size int64) int64 { return min(maxParquetHeld, parquetWorkLimit(size)) }

// checkParquet reads a Parquet catalogue file whole.
func checkParquet(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open catalogue %s: %w", path, err)
	}
	defer f.Close()
	return parquetOf(f, path, true)
}

// parquetOf reads the open Parquet file f, named path in errors; keepLines keeps each good row's
// JSON line in the report (Row.Line), which only an import that writes the good rows needs.
func parquetOf(f *os.File, path string, keepLines bool) (*Report, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat catalogue %s: %w", path, err)
	}
	rep, err := checkParquetRows(f, st.Size(), keepLines)
	var fe *FileError
	if errors.As(err, &fe) {
		fe.Path = path
	}
	return rep, err
}

// CheckParquet sorts the rows of the Parquet file in r (size bytes) into good and bad rows. A
// file that is not Parquet, or whose rows cannot be decoded, gives a *FileError (its Path empty).
func CheckParquet(r io.ReaderAt, size int64) (rep *Report, err error) {
	return checkParquetRows(r, size, true)
}

func checkParquetRows(r io.ReaderAt, size int64, keepLines bool) (rep *Report, err error) {
	defer func() {
		// parquet-go panics on some malformed files; such a file is bad, not a reason to stop.
		if p := recover(); p != nil {
			rep, err = nil, &FileError{Reason: fmt.Sprintf("not a readable parquet file: %v", p)}
		}
	}()
	if err := guardParquet(r, size); err != nil {
		return nil, &FileError{Reason: "not a readable parquet file: " + err.Error()}
	}
	// The page index and bloom filters are not read: rows are read in order, and parquet-go
	// allocates their declared lengths before reading them.
	pf, err := parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, &FileError{Reason: fmt.Sprintf("not a parquet file: %v", err)}
	}
	return readParquetRows(pf, size, keepLines)
}

// readParquetRows decodes every row of pf (a file of size bytes) into a JSON object and parses
// it as a task, within parquetWorkLimit and parquetHeldLimit.
func readParquetRows(pf *parquet.File, size int64, keepLines bool) (*Report, error) {
	rep := &Report{Format: FormatParquet, dropLines: !keepLines}
	workLimit, heldLimit := parquetWorkLimit(size), parquetHeldLimit(size)
	var work, held int64
	schema := pf.Schema()
	rd := parquet.NewReader(pf)
	defer rd.Close()
	buf := make([]parquet.Row, parquetChunk)
	n := 0
	for {
		k, err := rd.ReadRows(buf)
		for _, row := range buf[:k] {
			n++
			good := len(rep.Rows)
			decoded, err := rep.addParquet(schema, n, row)
			if err != nil {
				return nil, err
			}
			held += parquetRowCost
			if len(rep.Rows) > good {
				held += heldSize(&rep.Rows[good])
			}
			work += decoded + parquetRowCost + parquetValueCost*int64(len(row))
			switch {
			case work > workLimit:
				return nil, &FileError{Reason: fmt.Sprintf("not a readable parquet file: its rows decode into more "+
					"than %d MiB by row %d of %d (%d times the file's size, at least %d MiB); "+
					"write the catalogue as JSON lines or split it into smaller files",
					workLimit>>20, n, pf.NumRows(), maxParquetRatio, parquetWorkFloor>>20)}
			case held > heldLimit:
				return nil, &FileError{Reason: fmt.Sprintf("not a readable parquet file: its rows take more "+
					"than %d MiB to hold by row %d of %d (a file is read whole; at most %d MiB, and %d times "+
					"the file's size); write the catalogue as JSON lines or split it into smaller files",
					heldLimit>>20, n, pf.NumRows(), maxParquetHeld>>20, maxParquetRatio)}
			}
		}
		if errors.Is(err, io.EOF) {
			return rep, nil
		}
		if err != nil {
			return nil, &FileError{Reason: fmt.Sprintf("row %d: cannot decode: %v", n+1, err)}
		}
		if k == 0 {
			return rep, nil
		}
	}
}

// heldSize is about what holding a good row takes, beside parquetRowCost.
func heldSize(r *Row) int64 {
	t := &r.Task
	n := int64(len(r.Line) + len(t.Env) + len(t.Task) + len(t.Text) + 8*len(t.Embedding))
	for _, s := range t.Tools {
		n += int64(16 + len(s))
	}
	for _, s := range t.Tags {
		n += int64(16 + len(s))
	}
	return n
}

// addParquet turns one row into JSON and sorts it into rep, and returns the JSON's length (what
// decoding it took); an error is a *FileError.
func (rep *Report) addParquet(schema *parquet.Schema, n int, row parquet.Row) (int64, error) {
	var v any
	if err := schema.Reconstruct(&v, row); err != nil {
		return 0, &FileError{Reason: fmt.Sprintf("row %d: cannot decode: %v", n, err)}
	}
	line, err := json.Marshal(jsonable(project(v)))
	if err != nil {
		rep.Bad = append(rep.Bad, BadRow{N: n, Reason: "not representable as JSON: " + err.Error()})
		return 0, nil
	}
	if len(line) > record.MaxLine {
		rep.Bad = append(rep.Bad, BadRow{N: n, Reason: record.ReasonTooLong})
		return int64(len(line)), nil
	}
	rep.add(n, line)
	return int64(len(line)), nil
}

// catalogueKeys are the top-level keys of PROTOCOL.md's catalogue records, and extraKeys those
// read inside extra_info. Other columns (reward_model, ability, images, ...) are dropped before a
// row becomes JSON: they cost time and are never read.
var (
	catalogueKeys = []string{"env", "data_source", "env_class", "environment", "task_name", "tag", "domain",
		"task_id", "task", "index", "item_id", "id",
		"text", "description", "instruction", "question", "prompt", "tools", "tags", "embedding", "extra_info"}
	extraKeys = []string{"data_source", "task_id", "index"}
)

// envKeys and taskKeys are where record.ParseTask reads an env and a task id, in its order (the
// first present and not null is taken); "extra_info." names a key of extra_info.
var (
	envKeys  = []string{"env", "data_source", "env_class", "environment", "task_name", "tag", "domain", "extra_info.data_source"}
	taskKeys = []string{"task_id", "task", "extra_info.task_id", "index", "extra_info.index", "item_id", "id"}
)

// project keeps the catalogue keys of a reconstructed row.
func project(v any) any {
	row, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := pick(row, catalogueKeys)
	if extra, ok := out["extra_info"].(map[string]any); ok {
		out["extra_info"] = pick(extra, extraKeys)
	}
	rawName(out, envKeys)
	rawName(out, taskKeys)
	return out
}

// rawName writes the name ParseTask will read from row (the first of keys present) as a JSON
// string holding its bytes as they are when they are not valid UTF-8, so that the row is refused
// as a JSON line with them is (env not valid UTF-8). encoding/json writes U+FFFD for each bad
// byte: "a\xff" and "a\xfe" were both read as "a\uFFFD", one task, whose last row took the
// other's place. Other strings keep U+FFFD (a text that is not UTF-8 still reads).
func rawName(row map[string]any, keys []string) {
	for _, k := range keys {
		m := row
		if sub, ok := strings.CutPrefix(k, "extra_info."); ok {
			if m, ok = row["extra_info"].(map[string]any); !ok {
				continue
			}
			k = sub
		}
		var s string
		switch v := m[k].(type) {
		case nil:
			continue
		case string:
			s = v
		case []byte:
			s = string(v)
		default:
			return // not a string: ParseTask says so
		}
		if !utf8.ValidString(s) {
			m[k] = rawJSONString(s)
		}
		return
	}
}

// rawJSONString is s as a JSON string whose bytes from 0x80 up are written as they are.
func rawJSONString(s string) json.RawMessage {
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = fmt.Appendf(b, "\\u%04x", c)
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

func pick(m map[string]any, keys []string) map[string]any {
	out := make(map[string]any, len(keys))
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

// jsonable turns a reconstructed Parquet value into one encoding/json writes as the JSON the row
// stands for: byte arrays become strings (when valid UTF-8), maps with non-string keys get string
// keys, and non-finite floats become null (they carry no key a task needs).
func jsonable(v any) any {
	switch x := v.(type) {
	case []byte:
		if utf8.Valid(x) {
			return string(x)
		}
		return x
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(jsonable(k))] = jsonable(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
		return x
	case float64:
		return finite(x)
	case float32:
		return finite(float64(x))
	default:
		return v
	}
}

func finite(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return f
}
