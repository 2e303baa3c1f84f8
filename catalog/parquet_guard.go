package catalog

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
)

// The bounds a Parquet catalogue must keep before parquet-go decodes it. parquet-go allocates
// what a file declares (a footer's list lengths, a page's compressed and uncompressed sizes and
// value count, a zstd frame's content size) before it reads the bytes, and it retries a corrupt
// LZ4 page with twice the buffer without end: a file of a few hundred bytes could make the
// daemon allocate until it was killed. guardParquet walks the footer and every page header with
// these bounds first; a file beyond them is quarantined with the reason.
const (
	// maxParquetFooter bounds the file metadata (the footer); real catalogues' are kilobytes.
	maxParquetFooter = 64 << 20
	// maxParquetStructs bounds the structures a footer's lists hold (row groups times columns,
	// schema elements, ...), each decoded into about a kilobyte.
	maxParquetStructs = 1 << 19
	// maxParquetPageHeader bounds one page header (its statistics included).
	maxParquetPageHeader = 16 << 20
	// maxParquetPage bounds one page, compressed or not (writers use about 1 MiB).
	maxParquetPage = 256 << 20
	// maxParquetRowGroup bounds what decoding one row group holds at once: for every column, its
	// largest page (compressed and uncompressed bytes, levels, offsets and values) and its
	// dictionary.
	maxParquetRowGroup = 1 << 30
	// maxParquetDepth bounds the nesting of thrift structures, and that of the schema's groups.
	maxParquetDepth = 64
	// maxParquetSchema bounds the schema's elements (columns and groups): parquet-go keeps every
	// column's path, so a chain of n nested groups held n*n/2 names.
	maxParquetSchema = 100_000
	// maxParquetRows bounds the rows of a file (ten times the largest catalogue envsched is
	// built for): run-length encoding lets a few bytes stand for millions of rows, each kept.
	maxParquetRows = 10_000_000
	// maxParquetValuesPerRow and maxParquetValuesSlack bound the values of a row group (all
	// columns' data pages): perRow times its rows plus the slack. A row is put together whole
	// (about 100 bytes a value) before it is found too long, and a row's list may span pages.
	maxParquetValuesPerRow = 4096
	maxParquetValuesSlack  = 1 << 20
)

// guardError is a bound a Parquet file breaks; CheckParquet turns it into a *FileError.
type guardError struct{ reason string }

func (e *guardError) Error() string { return e.reason }

func guardf(format string, a ...any) error { return &guardError{fmt.Sprintf(format, a...)} }

// guardParquet checks the Parquet file in r (size bytes) against the bounds above without
// allocating more than they allow. It returns nil for a file parquet-go may decode, a
// *guardError for one beyond a bound (or whose structure is broken), another error for I/O.
func guardParquet(r io.ReaderAt, size int64) error {
	if size < 12 {
		return guardf("not a parquet file: %d bytes", size)
	}
	var tail [8]byte
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return err
	}
	if string(tail[4:]) != "PAR1" {
		return guardf("not a parquet file: no PAR1 at its end (encrypted parquet is not read)")
	}
	footerLen := int64(binary.LittleEndian.Uint32(tail[:4]))
	if footerLen > size-12 {
		return guardf("parquet footer of %d bytes does not fit in a file of %d bytes", footerLen, size)
	}
	if footerLen > maxParquetFooter {
		return guardf("parquet footer of %d bytes is larger than %d MiB", footerLen, maxParquetFooter>>20)
	}
	footer := make([]byte, footerLen)
	if _, err := r.ReadAt(footer, size-8-footerLen); err != nil {
		return err
	}
	sk := skimmer{structs: maxParquetStructs}
	if _, err := sk.structure(footer, 0); err != nil {
		return guardf("parquet footer: %v", err)
	}
	var meta format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), footer, &meta); err != nil {
		return guardf("parquet footer: %v", err)
	}
	if err := checkSchema(meta.Schema); err != nil {
		return guardf("parquet schema: %v", err)
	}
	widths := leafWidths(meta.Schema)
	dataEnd := size - 8 - footerLen
	var rows int64
	for g, rg := range meta.RowGroups {
		if rg.NumRows < 0 || rg.NumRows > maxParquetRows-rows {
			return guardf("more than %d rows (row group %d declares %d)", maxParquetRows, g, rg.NumRows)
		}
		rows += rg.NumRows
	}
	for g, rg := range meta.RowGroups {
		var need, values int64
		maxValues := maxParquetValuesPerRow*rg.NumRows + maxParquetValuesSlack
		for c, col := range rg.Columns {
			if col.FilePath != "" {
				return guardf("row group %d column %d: data in another file (%q) is not read", g, c, col.FilePath)
			}
			width := int64(8)
			if c < len(widths) {
				width = widths[c]
			}
			cost, n, err := guardChunk(r, &col.MetaData, width, dataEnd)
			if err != nil {
				return guardf("row group %d column %q: %v", g, dotted(col.MetaData.PathInSchema), err)
			}
			if values += n; values > maxValues {
				return guardf("row group %d holds more than %d values for its %d rows", g, maxValues, rg.NumRows)
			}
			if need += cost; need > maxParquetRowGroup {
				return guardf("row group %d needs more than %d MiB to decode at once; write it with smaller row groups or pages",
					g, maxParquetRowGroup>>20)
			}
		}
	}
	return nil
}

// checkSchema checks the size of the schema's flattened tree and how deep its groups nest.
func checkSchema(schema []format.SchemaElement) error {
	if len(schema) > maxParquetSchema {
		return fmt.Errorf("%d elements, more than %d", len(schema), maxParquetSchema)
	}
	var open []int32 // children still to come at each level
	for i, e := range schema {
		for len(open) > 0 && open[len(open)-1] == 0 {
			open = open[:len(open)-1]
		}
		if i > 0 && len(open) == 0 {
			return fmt.Errorf("element %d is outside the root's children", i)
		}
		if len(open) > 0 {
			open[len(open)-1]--
		}
		if n := e.NumChildren; n.Valid && n.V > 0 {
			if int64(n.V) > int64(len(schema)-i-1) {
				return fmt.Errorf("element %d declares %d children; %d elements follow", i, n.V, len(schema)-i-1)
			}
			if open = append(open, n.V); len(open) > maxParquetDepth {
				return fmt.Errorf("groups nested deeper than %d levels", maxParquetDepth)
			}
		}
	}
	return nil
}

// leafWidths is, for every leaf column in schema order, the bytes a decoded value takes.
func leafWidths(schema []format.SchemaElement) []int64 {
	var out []int64
	for _, e := range schema {
		if e.NumChildren.Valid && e.NumChildren.V > 0 {
			continue
		}
		w := int64(8)
		if e.Type.Valid {
			switch e.Type.V {
			case format.Int96:
				w = 12
			case format.FixedLenByteArray:
				if e.TypeLength.Valid {
					w = max(int64(e.TypeLength.V), 1)
				}
			}
		}
		out = append(out, w)
	}
	return out
}

func dotted(path []string) string {
	var b bytes.Buffer
	for i, p := range path {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// guardChunk walks the page headers of one column chunk as parquet-go will read them and
// returns what decoding it holds at once (its largest data page plus its dictionary) and the
// values of its data pages.
func guardChunk(r io.ReaderAt, md *format.ColumnMetaData, width, dataEnd int64) (cost, values int64, err error) {
	start := md.DataPageOffset
	if md.DictionaryPageOffset != 0 {
		start = md.DictionaryPageOffset
	}
	if start < 4 || md.TotalCompressedSize < 0 || start > dataEnd || md.TotalCompressedSize > dataEnd-start {
		return 0, 0, fmt.Errorf("column chunk at %d of %d bytes lies outside the file's %d data bytes",
			start, md.TotalCompressedSize, dataEnd)
	}
	end := start + md.TotalCompressedSize
	var dict, page int64
	for pos := start; pos < end; {
		h, hlen, err := readPageHeader(r, pos, end)
		if err != nil {
			return 0, 0, fmt.Errorf("page at %d: %v", pos, err)
		}
		body := pos + hlen
		c, n, err := guardPage(r, md.Codec, h, body, end, width)
		if err != nil {
			return 0, 0, fmt.Errorf("page at %d: %v", pos, err)
		}
		if h.Type == format.DictionaryPage {
			dict = max(dict, c)
		} else {
			page = max(page, c)
			values += n
		}
		pos = body + int64(h.CompressedPageSize)
	}
	return dict + page, values, nil
}

// readPageHeader reads the page header at pos (before end) and its length.
func readPageHeader(r io.ReaderAt, pos, end int64) (*format.PageHeader, int64, error) {
	for window := int64(512); ; window *= 8 {
		n := min(window, end-pos, maxParquetPageHeader)
		buf := make([]byte, n)
		if _, err := r.ReadAt(buf, pos); err != nil {
			return nil, 0, err
		}
		sk := skimmer{structs: maxParquetStructs}
		hlen, err := sk.structure(buf, 0)
		if errors.Is(err, errShort) && n < min(end-pos, maxParquetPageHeader) {
			continue
		}
		if errors.Is(err, errShort) && n == maxParquetPageHeader && n < end-pos {
			// a page's statistics hold its least and greatest value: values of megabytes.
			return nil, 0, fmt.Errorf("page header larger than %d MiB (its statistics hold values that long?)",
				maxParquetPageHeader>>20)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("page header: %v", err)
		}
		h := new(format.PageHeader)
		if err := thrift.Unmarshal(new(thrift.CompactProtocol), buf[:hlen], h); err != nil {
			return nil, 0, fmt.Errorf("page header: %v", err)
		}
		return h, int64(hlen), nil
	}
}

// guardPage checks one page whose body starts at body and returns what decoding it holds and
// its values.
func guardPage(r io.ReaderAt, codec format.CompressionCodec, h *format.PageHeader, body, end, width int64) (int64, int64, error) {
	cost, err := guardPageBody(r, codec, h, body, end, width)
	var values int64
	switch h.Type {
	case format.DataPage:
		values = int64(h.DataPageHeader.V.NumValues)
	case format.DataPageV2:
		values = int64(h.DataPageHeaderV2.V.NumValues)
	}
	return cost, values, err
}

// guardPageBody checks one page for guardPage.
func guardPageBody(r io.ReaderAt, codec format.CompressionCodec, h *format.PageHeader, body, end, width int64) (int64, error) {
	csize, usize := int64(h.CompressedPageSize), int64(h.UncompressedPageSize)
	if csize < 0 || usize < 0 {
		return 0, fmt.Errorf("negative page size (%d compressed, %d uncompressed)", csize, usize)
	}
	if csize > end-body {
		return 0, fmt.Errorf("page of %d bytes runs past its column chunk (%d bytes left)", csize, end-body)
	}
	if csize > maxParquetPage || usize > maxParquetPage {
		return 0, fmt.Errorf("page of %d bytes (%d uncompressed) is larger than %d MiB", csize, usize, maxParquetPage>>20)
	}
	var values, levels int64
	compressed, skip := true, int64(0)
	switch h.Type {
	case format.DataPage:
		values = int64(h.DataPageHeader.V.NumValues)
	case format.DataPageV2:
		v2 := &h.DataPageHeaderV2.V
		values = int64(v2.NumValues)
		levels = int64(v2.RepetitionLevelsByteLength) + int64(v2.DefinitionLevelsByteLength)
		if levels < 0 || levels > csize {
			return 0, fmt.Errorf("levels of %d bytes in a page of %d bytes", levels, csize)
		}
		compressed, skip = !v2.IsCompressed.Valid || v2.IsCompressed.V, levels
	case format.DictionaryPage:
		values = int64(h.DictionaryPageHeader.V.NumValues)
	}
	if values < 0 {
		return 0, fmt.Errorf("negative value count %d", values)
	}
	// levels (repetition and definition), offsets and the values themselves.
	cost := csize + usize + values*(2+4+width)
	if cost > maxParquetRowGroup {
		return 0, fmt.Errorf("page of %d values (%d bytes) needs more than %d MiB to decode", values, usize, maxParquetRowGroup>>20)
	}
	if !compressed || codec == format.Uncompressed || csize == 0 {
		return cost, nil
	}
	if h.Type != format.DataPage && h.Type != format.DataPageV2 && h.Type != format.DictionaryPage {
		return cost, nil // parquet-go refuses other pages without decompressing them
	}
	src := make([]byte, csize-skip)
	if _, err := r.ReadAt(src, body+skip); err != nil {
		return 0, err
	}
	if err := checkDecompressed(codec, src, usize-skip); err != nil {
		return 0, err
	}
	return cost, nil
}

// checkDecompressed checks that src decompresses into at most limit bytes, without holding more
// than the decompressor's window: parquet-go trusts the declared size.
func checkDecompressed(codec format.CompressionCodec, src []byte, limit int64) error {
	limit = max(limit, 0)
	tooBig := fmt.Errorf("page decompresses into more than its declared %d bytes", limit)
	var rd io.Reader
	switch codec {
	case format.Snappy:
		n, err := snappy.DecodedLen(src)
		if err != nil {
			return fmt.Errorf("snappy page: %v", err)
		}
		if int64(n) > limit {
			return tooBig
		}
		return nil
	case format.Lz4Raw:
		// parquet-go retries a block that does not decode with twice the buffer, without end.
		if _, err := lz4.UncompressBlock(src, make([]byte, limit)); err != nil {
			return fmt.Errorf("lz4 page does not decompress into its declared %d bytes: %v", limit, err)
		}
		return nil
	case format.Gzip:
		z, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return fmt.Errorf("gzip page: %v", err)
		}
		rd = z
	case format.Brotli:
		rd = brotli.NewReader(bytes.NewReader(src))
	case format.Zstd:
		z, err := zstd.NewReader(bytes.NewReader(src), zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(maxParquetPage))
		if err != nil {
			return fmt.Errorf("zstd page: %v", err)
		}
		defer z.Close()
		// parquet-go's DecodeAll allocates each frame's declared content size first.
		if err := checkZstdFrames(src, limit); err != nil {
			return err
		}
		rd = z
	default:
		return nil // parquet-go refuses codecs it does not know
	}
	n, err := io.Copy(io.Discard, io.LimitReader(rd, limit+1))
	if n > limit {
		return tooBig
	}
	if err != nil {
		return fmt.Errorf("%s page: %v", codec, err)
	}
	return nil
}

// checkZstdFrames checks the declared content sizes of every zstd frame of src (skippable frames
// included in the walk): parquet-go's DecodeAll allocates each frame's declared size (up to
// 32,768 times the bytes after the frame header) before it decodes the frame, into one buffer
// for all frames. Only the first frame's was checked; a later frame's lie (2 GiB allocated by
// DecodeAll for a 64 KiB page) was refused only because the streaming decode below checks each
// frame's size once it is decoded, a check of the library's, not ours.
func checkZstdFrames(src []byte, limit int64) error {
	var total uint64
	for n, rest := 1, src; len(rest) > 0; n++ {
		var h zstd.Header
		if err := h.Decode(rest); err != nil {
			return fmt.Errorf("zstd page: frame %d: %v", n, err)
		}
		if h.Skippable {
			size := uint64(h.HeaderSize) + uint64(h.SkippableSize)
			if size > uint64(len(rest)) {
				return fmt.Errorf("zstd page: skippable frame %d of %d bytes runs past the page", n, size)
			}
			rest = rest[size:]
			continue
		}
		if h.HasFCS {
			if h.FrameContentSize > uint64(limit)-total {
				return fmt.Errorf("zstd frame declares %d bytes in a page of %d (frame %d, after %d bytes declared)",
					h.FrameContentSize, limit, n, total)
			}
			total += h.FrameContentSize
		}
		end, err := zstdFrameEnd(rest, h)
		if err != nil {
			return fmt.Errorf("zstd page: frame %d: %v", n, err)
		}
		rest = rest[end:]
	}
	return nil
}

// zstdFrameEnd is the length of the zstd frame at the start of b whose header is h: its header,
// blocks and checksum.
func zstdFrameEnd(b []byte, h zstd.Header) (int, error) {
	pos := h.HeaderSize
	for {
		if len(b)-pos < 3 {
			return 0, errors.New("a block header runs past the page")
		}
		bh := int(b[pos]) | int(b[pos+1])<<8 | int(b[pos+2])<<16
		pos += 3
		size := bh >> 3
		switch (bh >> 1) & 3 {
		case 1: // run-length: one byte repeated size times
			size = 1
		case 3:
			return 0, errors.New("reserved block type")
		}
		if size > len(b)-pos {
			return 0, fmt.Errorf("a block of %d bytes runs past the page", size)
		}
		pos += size
		if bh&1 == 1 {
			break
		}
	}
	if h.HasCheckSum {
		if len(b)-pos < 4 {
			return 0, errors.New("the checksum runs past the page")
		}
		pos += 4
	}
	return pos, nil
}

// errShort: the bytes end inside a thrift structure.
var errShort = errors.New("truncated thrift structure")

// skimmer walks thrift compact-protocol bytes without decoding them, checking that every
// length fits in the bytes left (so that decoding them allocates at most in proportion to the
// bytes) and counting the structures that lists hold.
type skimmer struct {
	structs int // structures lists may still hold
}

// Thrift compact-protocol types.
const (
	ctStop = iota
	ctTrue
	ctFalse
	ctByte
	ctI16
	ctI32
	ctI64
	ctDouble
	ctBinary
	ctList
	ctSet
	ctMap
	ctStruct
	ctUUID
)

func uvarint(b []byte, i int) (uint64, int, error) {
	v, n := binary.Uvarint(b[i:])
	if n == 0 {
		return 0, i, errShort
	}
	if n < 0 {
		return 0, i, errors.New("varint overflows 64 bits")
	}
	return v, i + n, nil
}

// structure skims the structure at b[i:] and returns the position after it.
func (s *skimmer) structure(b []byte, i int) (int, error) {
	return s.value(b, i, ctStruct, 0)
}

// value skims one value of type t at b[i:] at nesting depth.
func (s *skimmer) value(b []byte, i int, t byte, depth int) (int, error) {
	if depth > maxParquetDepth {
		return i, fmt.Errorf("nested deeper than %d levels", maxParquetDepth)
	}
	need := func(n uint64) error {
		if n > uint64(len(b)-i) {
			return errShort
		}
		return nil
	}
	switch t {
	case ctTrue, ctFalse, ctByte:
		// a field's boolean has no byte of its own; a list's has one (handled by the caller).
		if t == ctByte {
			if err := need(1); err != nil {
				return i, err
			}
			return i + 1, nil
		}
		return i, nil
	case ctI16, ctI32, ctI64:
		_, j, err := uvarint(b, i)
		return j, err
	case ctDouble:
		return i + 8, need(8)
	case ctUUID:
		return i + 16, need(16)
	case ctBinary:
		n, j, err := uvarint(b, i)
		if err != nil {
			return j, err
		}
		i = j
		return i + int(min(n, uint64(len(b)))), need(n)
	case ctList, ctSet:
		if err := need(1); err != nil {
			return i, err
		}
		hd := b[i]
		i++
		n, et := uint64(hd>>4), hd&0xf
		if n == 0xf {
			var err error
			if n, i, err = uvarint(b, i); err != nil {
				return i, err
			}
		}
		return s.elements(b, i, n, et, depth)
	case ctMap:
		n, j, err := uvarint(b, i)
		if err != nil || n == 0 {
			return j, err
		}
		i = j
		if err := need(1); err != nil {
			return i, err
		}
		kt, vt := b[i]>>4, b[i]&0xf
		i++
		if err := need(n); err != nil { // every entry takes at least one byte
			return i, err
		}
		for range n {
			if i, err = s.element(b, i, kt, depth); err != nil {
				return i, err
			}
			if i, err = s.element(b, i, vt, depth); err != nil {
				return i, err
			}
		}
		return i, nil
	case ctStruct:
		var last int64
		for {
			if err := need(1); err != nil {
				return i, err
			}
			hd := b[i]
			i++
			ft := hd & 0xf
			if ft == ctStop {
				return i, nil
			}
			if delta := int64(hd >> 4); delta != 0 {
				last += delta
			} else {
				z, j, err := uvarint(b, i)
				if err != nil {
					return j, err
				}
				i, last = j, int64(z>>1)^-int64(z&1)
			}
			var err error
			if i, err = s.value(b, i, ft, depth+1); err != nil {
				return i, err
			}
		}
	default:
		return i, fmt.Errorf("unknown thrift type %d", t)
	}
}

// elements skims n list elements of type t.
func (s *skimmer) elements(b []byte, i int, n uint64, t byte, depth int) (int, error) {
	if n > uint64(len(b)-i) { // every element takes at least one byte
		return i, errShort
	}
	if t == ctStruct {
		if n > uint64(s.structs) {
			return i, fmt.Errorf("more than %d structures in lists", maxParquetStructs)
		}
		s.structs -= int(n)
	}
	var err error
	for range n {
		if i, err = s.element(b, i, t, depth); err != nil {
			return i, err
		}
	}
	return i, nil
}

// element skims one element of a list or map: a boolean takes a byte there.
func (s *skimmer) element(b []byte, i int, t byte, depth int) (int, error) {
	if t == ctTrue || t == ctFalse {
		if i >= len(b) {
			return i, errShort
		}
		return i + 1, nil
	}
	return s.value(b, i, t, depth+1)
}
