package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
)

// TestParquetNamesNotUTF8AreBadRows: a parquet row whose env or task id is not valid UTF-8 is a
// bad row with the reason a JSON line gets (env not valid UTF-8). encoding/json wrote U+FFFD for
// each bad byte, so "a\xff" and "a\xfe" were read as one task "a\uFFFD" (the second row took the
// first's place, its text lost), a byte-array column (no string annotation) alike. A text that
// is not UTF-8 still reads (with U+FFFD), as before.
func TestParquetNamesNotUTF8AreBadRows(t *testing.T) {
	type row struct {
		Env  string `parquet:"env"`
		Task string `parquet:"task_id"`
		Text string `parquet:"text"`
	}
	type bytesRow struct {
		Env  []byte `parquet:"env"`
		Task string `parquet:"task_id"`
	}
	var b bytes.Buffer
	w := parquet.NewGenericWriter[row](&b)
	_, err := w.Write([]row{{"a\xff", "t", "first"}, {"a\xfe", "t", "second"}, {"ok", "t\xc3", "z"},
		{"ok", "u", "text \xff kept"}, {"q\"\\\x01", "v", "quoted"}})
	must(t, err)
	must(t, w.Close())
	rep, err := CheckParquet(bytes.NewReader(b.Bytes()), int64(b.Len()))
	must(t, err)
	got := fmt.Sprint(rep.Bad)
	if want := "[row 1: env not valid UTF-8 row 2: env not valid UTF-8 row 3: task not valid UTF-8]"; got != want {
		t.Errorf("bad rows %s; want %s", got, want)
	}
	if len(rep.Rows) != 2 || rep.Rows[0].Task.Text != "text \ufffd kept" || rep.Rows[1].Task.Env != "q\"\\\x01" {
		t.Errorf("good rows %+v", rep.Rows)
	}

	b.Reset()
	wb := parquet.NewGenericWriter[bytesRow](&b)
	_, err = wb.Write([]bytesRow{{[]byte("\xff\xfe"), "t"}, {[]byte("plain"), "t"}})
	must(t, err)
	must(t, wb.Close())
	rep, err = CheckParquet(bytes.NewReader(b.Bytes()), int64(b.Len()))
	must(t, err)
	if fmt.Sprint(rep.Bad) != "[row 1: env not valid UTF-8]" || len(rep.Rows) != 1 || rep.Rows[0].Task.Env != "plain" {
		t.Errorf("byte-array env: bad %v, rows %+v", rep.Bad, rep.Rows)
	}

	// Only the key a name is read from counts: an alias after it (tag after env, id after
	// task_id) is not read and keeps U+FFFD, so the good row's line stays valid UTF-8.
	type aliasRow struct {
		Env  string `parquet:"env"`
		Tag  string `parquet:"tag"`
		Task string `parquet:"task_id"`
		ID   string `parquet:"id"`
	}
	b.Reset()
	wa := parquet.NewGenericWriter[aliasRow](&b)
	_, err = wa.Write([]aliasRow{{"ok", "x\xff", "t", "y\xfe"}})
	must(t, err)
	must(t, wa.Close())
	rep, err = CheckParquet(bytes.NewReader(b.Bytes()), int64(b.Len()))
	must(t, err)
	if len(rep.Bad) != 0 || len(rep.Rows) != 1 || !utf8.Valid(rep.Rows[0].Line) {
		t.Errorf("aliases not read: bad %v, rows %+v", rep.Bad, rep.Rows)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestParquetUnreadColumnsCountAsWork: a column no task reads still has every value decoded. A
// 776 KB file of 100,000 rows with 4,096 zeros each in such a column (run-length encoded, zstd)
// took 19 s of CPU and was accepted; the values now count in what a file may decode into (16
// bytes each), so it is refused after a few thousand rows.
func TestParquetUnreadColumnsCountAsWork(t *testing.T) {
	type row struct {
		Env    string  `parquet:"env,dict"`
		TaskID int64   `parquet:"task_id,delta"`
		Junk   []int32 `parquet:"junk,dict"`
	}
	var b bytes.Buffer
	w := parquet.NewGenericWriter[row](&b, parquet.Compression(&parquet.Zstd))
	junk := make([]int32, 4096)
	for i := range 10_000 {
		_, err := w.Write([]row{{Env: "e", TaskID: int64(i), Junk: junk}})
		must(t, err)
	}
	must(t, w.Close())
	_, err := CheckParquet(bytes.NewReader(b.Bytes()), int64(b.Len()))
	var fe *FileError
	if !errors.As(err, &fe) || !strings.Contains(fe.Reason, "rows decode into more than 64 MiB") {
		t.Fatalf("a %d-byte file of 10,000 rows of 4,096 values: %v; want the work bound", b.Len(), err)
	}
}
