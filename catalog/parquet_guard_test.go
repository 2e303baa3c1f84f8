package catalog

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// craft is a Parquet file written by hand, byte for byte, so that a test can declare what a
// writer never would: a catalogue of two required byte-array columns (env, task_id) with one
// data page each.
type craft struct {
	codec format.CompressionCodec
	rows  int
	// page, when set, changes a column's page header and compressed body before they are written.
	page func(col int, h *format.PageHeader, body []byte) []byte
	// footer, when set, replaces the footer's bytes.
	footer func(meta []byte) []byte
	// rle, when set, writes each column as a dictionary of one value and a data page of one
	// run of rows indexes (uncompressed): a few bytes for any number of rows.
	rle bool
}

// rleChunk is a column chunk of rle: a dictionary page of one value, a data page of one run.
func rleChunk(t *testing.T, out []byte, name, value string, rows int) ([]byte, format.ColumnChunk) {
	dict := binary.LittleEndian.AppendUint32(nil, uint32(len(value)))
	dict = append(dict, value...)
	dh := marshal(t, &format.PageHeader{Type: format.DictionaryPage, UncompressedPageSize: int32(len(dict)),
		CompressedPageSize:   int32(len(dict)),
		DictionaryPageHeader: thrift.New(format.DictionaryPageHeader{NumValues: 1, Encoding: format.Plain})})
	data := binary.AppendUvarint([]byte{0}, uint64(rows)<<1) // bit width 0, one run of rows zeros
	ph := marshal(t, &format.PageHeader{Type: format.DataPage, UncompressedPageSize: int32(len(data)),
		CompressedPageSize: int32(len(data)),
		DataPageHeader: thrift.New(format.DataPageHeader{NumValues: int32(rows), Encoding: format.RLEDictionary,
			DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE})})
	off := int64(len(out))
	out = append(append(append(append(out, dh...), dict...), ph...), data...)
	size := int64(len(dh) + len(dict) + len(ph) + len(data))
	return out, format.ColumnChunk{FileOffset: off, MetaData: format.ColumnMetaData{
		Type: format.ByteArray, Encoding: []format.Encoding{format.Plain, format.RLEDictionary},
		PathInSchema: []string{name}, Codec: format.Uncompressed, NumValues: int64(rows),
		TotalUncompressedSize: size, TotalCompressedSize: size,
		DictionaryPageOffset: off, DataPageOffset: off + int64(len(dh)+len(dict))}}
}

func codecOf(c format.CompressionCodec) compress.Codec {
	switch c {
	case format.Snappy:
		return &parquet.Snappy
	case format.Gzip:
		return &parquet.Gzip
	case format.Zstd:
		return &parquet.Zstd
	case format.Lz4Raw:
		return &parquet.Lz4Raw
	case format.Brotli:
		return &parquet.Brotli
	}
	return &parquet.Uncompressed
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := thrift.Marshal(new(thrift.CompactProtocol), v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (c craft) bytes(t *testing.T) []byte {
	t.Helper()
	rows := max(c.rows, 3)
	out := []byte("PAR1")
	var chunks []format.ColumnChunk
	for col, name := range []string{"env", "task_id"} {
		if c.rle {
			var chunk format.ColumnChunk
			out, chunk = rleChunk(t, out, name, []string{"e", "t"}[col], rows)
			chunks = append(chunks, chunk)
			continue
		}
		var raw []byte
		for i := range rows {
			v := "e"
			if col == 1 {
				v = fmt.Sprint("t", i)
			}
			raw = binary.LittleEndian.AppendUint32(raw, uint32(len(v)))
			raw = append(raw, v...)
		}
		body := raw
		if c.codec != format.Uncompressed {
			var err error
			if body, err = codecOf(c.codec).Encode(nil, raw); err != nil {
				t.Fatal(err)
			}
		}
		h := &format.PageHeader{Type: format.DataPage, UncompressedPageSize: int32(len(raw)),
			CompressedPageSize: int32(len(body)),
			DataPageHeader: thrift.New(format.DataPageHeader{NumValues: int32(rows), Encoding: format.Plain,
				DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE})}
		if c.page != nil {
			body = c.page(col, h, body)
		}
		hb := marshal(t, h)
		off := int64(len(out))
		out = append(append(out, hb...), body...)
		chunks = append(chunks, format.ColumnChunk{FileOffset: off, MetaData: format.ColumnMetaData{
			Type: format.ByteArray, Encoding: []format.Encoding{format.Plain, format.RLE},
			PathInSchema: []string{name}, Codec: c.codec, NumValues: int64(rows),
			TotalUncompressedSize: int64(len(hb) + len(raw)), TotalCompressedSize: int64(len(hb) + len(body)),
			DataPageOffset: off}})
	}
	req := thrift.New(format.Required)
	meta := marshal(t, &format.FileMetaData{Version: 1, NumRows: int64(rows),
		Schema: []format.SchemaElement{{Name: "schema", NumChildren: thrift.New(int32(2))},
			{Name: "env", Type: thrift.New(format.ByteArray), RepetitionType: req},
			{Name: "task_id", Type: thrift.New(format.ByteArray), RepetitionType: req}},
		RowGroups: []format.RowGroup{{Columns: chunks, NumRows: int64(rows), TotalByteSize: int64(len(out))}}})
	if c.footer != nil {
		meta = c.footer(meta)
	}
	out = append(out, meta...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(meta)))
	return append(out, "PAR1"...)
}

// TestCraftedParquetReads: the hand-written file of the tests below is a good catalogue in every
// codec parquet-go reads, so the refusals below are the bounds' doing, not a broken file's.
func TestCraftedParquetReads(t *testing.T) {
	data := craft{rle: true, rows: 1000}.bytes(t)
	rep, err := CheckParquet(bytes.NewReader(data), int64(len(data)))
	if err != nil || len(rep.Rows) != 1000 || rep.Rows[999].Task.Task != "t" {
		t.Fatalf("run-length file: %v", err)
	}
	for _, codec := range []format.CompressionCodec{format.Uncompressed, format.Snappy, format.Gzip,
		format.Zstd, format.Lz4Raw, format.Brotli} {
		data := craft{codec: codec, rows: 5}.bytes(t)
		rep, err := CheckParquet(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("%s: %v", codec, err)
		}
		if len(rep.Rows) != 5 || len(rep.Bad) != 0 || rep.Rows[4].Task.Task != "t4" {
			t.Fatalf("%s: %d rows, %d bad: %+v", codec, len(rep.Rows), len(rep.Bad), rep.Rows)
		}
	}
	// A zstd page of several frames (with a checksum, and skippable frames between) is read.
	data = craft{codec: format.Zstd, rows: 5, page: func(col int, h *format.PageHeader, b []byte) []byte {
		plain, err := codecOf(format.Zstd).Decode(nil, b)
		if err != nil {
			t.Fatal(err)
		}
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
		if err != nil {
			t.Fatal(err)
		}
		half := len(plain) / 2
		b = append(append(enc.EncodeAll(plain[:half], skippable(3)), skippable(0)...), enc.EncodeAll(plain[half:], nil)...)
		h.CompressedPageSize = int32(len(b))
		return b
	}}.bytes(t)
	if rep, err = CheckParquet(bytes.NewReader(data), int64(len(data))); err != nil || len(rep.Rows) != 5 {
		t.Fatalf("zstd page of several frames: %v", err)
	}
}

// zstdFrame is one zstd frame that declares size bytes of content and holds raw as one raw block.
func zstdFrame(raw []byte, size uint64) []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0} // magic; single segment, 8-byte content size
	b = binary.LittleEndian.AppendUint64(b, size)
	hd := uint32(len(raw))<<3 | 1 // last block, raw
	b = append(b, byte(hd), byte(hd>>8), byte(hd>>16))
	return append(b, raw...)
}

// zstdWindowed is one zstd frame with a 1 KiB window that declares size bytes of content and holds
// one run-length block of raw's first byte, once: a frame DecodeAll allocates size bytes for (up to
// 32,768 times the bytes after its header) before it finds the frame short.
func zstdWindowed(raw []byte, size uint64) []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xc0, 0x00} // magic; 8-byte content size, window 1 KiB
	b = binary.LittleEndian.AppendUint64(b, size)
	hd := uint32(1)<<3 | 1<<1 | 1 // last block, run-length, once
	return append(b, byte(hd), byte(hd>>8), byte(hd>>16), raw[0])
}

// skippable is a zstd skippable frame of n bytes of zeros.
func skippable(n int) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 0x184d2a50)
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	return append(b, make([]byte, n)...)
}

// TestParquetDeclaredSizesAreBounded: every file below is a few hundred bytes whose headers
// declare sizes that parquet-go allocated before reading (a 2 GiB page buffer, 8 GiB of value
// offsets, a 16 GiB zstd frame, a footer list of 2^28 schema elements, 80 GB of column paths for
// a schema of 100,000 nested groups) or that it decoded without
// a bound (a corrupt LZ4 page retried with twice the buffer without end, a gzip page that
// inflates past its declared size). Each is refused with a reason, before any such allocation.
func TestParquetDeclaredSizesAreBounded(t *testing.T) {
	zeros, err := func() ([]byte, error) {
		var b bytes.Buffer
		z := gzip.NewWriter(&b)
		if _, err := z.Write(make([]byte, 8<<20)); err != nil {
			return nil, err
		}
		err := z.Close()
		return b.Bytes(), err
	}()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		c    craft
		want string
	}{
		{"uncompressed page size 2 GiB", craft{codec: format.Snappy, page: func(col int, h *format.PageHeader, b []byte) []byte {
			h.UncompressedPageSize = 1<<31 - 1
			return b
		}}, "larger than 256 MiB"},
		{"compressed page past its chunk", craft{codec: format.Uncompressed, page: func(col int, h *format.PageHeader, b []byte) []byte {
			h.CompressedPageSize = 1<<31 - 1
			return b
		}}, "runs past its column chunk"},
		{"two billion values", craft{codec: format.Uncompressed, page: func(col int, h *format.PageHeader, b []byte) []byte {
			h.DataPageHeader.V.NumValues = 1<<31 - 1
			return b
		}}, "needs more than 1024 MiB"},
		{"zstd frame of 16 GiB", craft{codec: format.Zstd, page: func(col int, h *format.PageHeader, b []byte) []byte {
			raw := plainColumn(col)
			b = zstdFrame(raw, 16<<30)
			h.UncompressedPageSize, h.CompressedPageSize = int32(len(raw)), int32(len(b))
			return b
		}}, "zstd frame declares"},
		{"zstd frame of 16 GiB behind a good frame", craft{codec: format.Zstd, page: func(col int, h *format.PageHeader, b []byte) []byte {
			b = append(append(b, zstdWindowed([]byte("x"), 16<<30)...), skippable(64<<10)...)
			h.CompressedPageSize = int32(len(b))
			return b
		}}, "zstd frame declares 17179869184 bytes in a page of"},
		{"zstd frame of 16 GiB behind a skippable frame", craft{codec: format.Zstd, page: func(col int, h *format.PageHeader, b []byte) []byte {
			b = append(append(skippable(16), zstdWindowed([]byte("x"), 16<<30)...), skippable(64<<10)...)
			h.CompressedPageSize = int32(len(b))
			return b
		}}, "(frame 2, after 0 bytes declared)"},
		{"zstd frames declaring more than the page in all", craft{codec: format.Zstd, page: func(col int, h *format.PageHeader, b []byte) []byte {
			raw := plainColumn(col)
			b = append(zstdFrame(raw, uint64(len(raw))), zstdFrame(raw, uint64(len(raw)))...)
			h.UncompressedPageSize, h.CompressedPageSize = int32(len(raw)), int32(len(b))
			return b
		}}, "(frame 2, after"},
		{"zstd block past the page", craft{codec: format.Zstd, page: func(col int, h *format.PageHeader, b []byte) []byte {
			b = append(b, zstdWindowed([]byte("x"), 1)[:12]...)
			h.CompressedPageSize = int32(len(b))
			return b
		}}, "zstd page: frame 2"},
		{"page header of 17 MiB", craft{codec: format.Uncompressed, page: func(col int, h *format.PageHeader, b []byte) []byte {
			h.DataPageHeader.V.Statistics.MinValue = make([]byte, 17<<20) // was "truncated thrift structure"
			return b
		}}, "page header larger than 16 MiB"},
		{"corrupt lz4 page", craft{codec: format.Lz4Raw, page: func(col int, h *format.PageHeader, b []byte) []byte {
			b = []byte{0xf0, 0xff, 0xff, 0xff, 0x0f, 'x'} // a literal run longer than the block
			h.CompressedPageSize = int32(len(b))
			return b
		}}, "lz4 page does not decompress"},
		{"gzip page inflating to 8 MiB", craft{codec: format.Gzip, page: func(col int, h *format.PageHeader, b []byte) []byte {
			h.CompressedPageSize = int32(len(zeros))
			return zeros
		}}, "decompresses into more than its declared"},
		{"snappy page declaring 4 GiB", craft{codec: format.Snappy, page: func(col int, h *format.PageHeader, b []byte) []byte {
			b = append(binary.AppendUvarint(nil, 1<<32-1), b...)
			h.CompressedPageSize = int32(len(b))
			return b
		}}, "decompresses into more than its declared"},
		{"footer list of 2^28 schema elements", craft{footer: func([]byte) []byte {
			// version 1, then field 2 (schema): a list of 2^28 structures, and nothing more.
			return binary.AppendUvarint([]byte{0x15, 0x02, 0x19, 0xfc}, 1<<28)
		}}, "truncated thrift structure"},
		{"schema of 99,999 nested groups", craft{footer: func([]byte) []byte { return chain(t, 99_999) }},
			"nested deeper than 64 levels"},
		{"schema of 70 nested groups", craft{footer: func([]byte) []byte { return chain(t, 70) }},
			"nested deeper than 64 levels"},
		{"schema of 200,000 elements", craft{footer: func([]byte) []byte { return chain(t, 199_999) }},
			"200000 elements, more than 100000"},
		{"20 million rows in 60 bytes of pages", craft{rle: true, rows: 20_000_000}, "more than 10000000 rows"},
		{"two million values for three rows", craft{codec: format.Uncompressed, page: func(col int, h *format.PageHeader, b []byte) []byte {
			h.DataPageHeader.V.NumValues = 2_000_000
			return b
		}}, "values for its 3 rows"},
		{"empty footer", craft{footer: func([]byte) []byte { return nil }}, "parquet footer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.c.bytes(t)
			rep, err := CheckParquet(bytes.NewReader(data), int64(len(data)))
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, %v; want a *FileError", rep, err)
			}
			if !strings.Contains(fe.Reason, tc.want) {
				t.Fatalf("reason %q; want it to say %q", fe.Reason, tc.want)
			}
		})
	}
}

// chain is a footer whose schema nests n groups in a chain down to one leaf: parquet-go keeps
// each column's path, n*n/2 names (80 GB at n = 100,000).
func chain(t *testing.T, n int) []byte {
	schema := make([]format.SchemaElement, 0, n+1)
	for range n {
		schema = append(schema, format.SchemaElement{Name: "g", NumChildren: thrift.New(int32(1))})
	}
	schema = append(schema, format.SchemaElement{Name: "env", Type: thrift.New(format.ByteArray),
		RepetitionType: thrift.New(format.Optional)})
	return marshal(t, &format.FileMetaData{Version: 1, Schema: schema})
}

// TestParquetChunkOutsideTheFile: a column chunk whose offsets point past the data is refused
// by name, before a page header is read there.
func TestParquetChunkOutsideTheFile(t *testing.T) {
	meta := func(m []byte) []byte {
		var fm format.FileMetaData
		if err := thrift.Unmarshal(new(thrift.CompactProtocol), m, &fm); err != nil {
			t.Fatal(err)
		}
		fm.RowGroups[0].Columns[1].MetaData.DataPageOffset = 1 << 40
		return marshal(t, &fm)
	}
	data := craft{footer: meta}.bytes(t)
	_, err := CheckParquet(bytes.NewReader(data), int64(len(data)))
	var fe *FileError
	if !errors.As(err, &fe) || !strings.Contains(fe.Reason, `column "task_id"`) || !strings.Contains(fe.Reason, "outside the file") {
		t.Fatalf("got %v; want the task_id chunk refused as outside the file", err)
	}
}

// TestParquetDecodedRowsAreBounded: a file of 1,000,000 run-length encoded rows in about 150
// bytes passed every declared bound and was decoded whole, each row held (10,000,000 such rows
// in a 460 KB file held 11 GB for 116 s). Now what the rows decode into is counted as they are
// decoded and the file is refused once it passes parquetWorkLimit.
func TestParquetDecodedRowsAreBounded(t *testing.T) {
	data := craft{rle: true, rows: 1_000_000}.bytes(t)
	rep, err := CheckParquet(bytes.NewReader(data), int64(len(data)))
	var fe *FileError
	if !errors.As(err, &fe) || !strings.Contains(fe.Reason, "more than 64 MiB") ||
		!strings.Contains(fe.Reason, "of 1000000") {
		n := 0
		if rep != nil {
			n = len(rep.Rows)
		}
		t.Fatalf("a %d-byte file of 1,000,000 rows: %v (%d rows kept); want the decoded bound", len(data), err, n)
	}
	if got, want := parquetWorkLimit(10<<20), int64(2560<<20); got != want {
		t.Errorf("work limit of a 10 MiB file: %d, want %d", got, want)
	}
	if got, want := parquetHeldLimit(10<<20), int64(2<<30); got != want {
		t.Errorf("held limit of a 10 MiB file: %d, want %d", got, want)
	}
	if got, want := parquetHeldLimit(1<<20), int64(256<<20); got != want {
		t.Errorf("held limit of a 1 MiB file: %d, want %d", got, want)
	}
}

// plainColumn is the PLAIN-encoded page of the crafted files' column col: three rows of env "e"
// (column 0) or of task ids t0, t1, t2 (column 1).
func plainColumn(col int) []byte {
	if col == 1 {
		return []byte("\x02\x00\x00\x00t0\x02\x00\x00\x00t1\x02\x00\x00\x00t2")
	}
	return []byte("\x01\x00\x00\x00e\x01\x00\x00\x00e\x01\x00\x00\x00e")
}
