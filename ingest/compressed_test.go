package ingest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"strings"
	"testing"
)

// TestCompressedJSONLIsQuarantinedWhole: a .jsonl file that is gzip-compressed was read as
// lines: as many "invalid JSON" entries as its bytes held newlines (hundreds here), and when they
// held none (a 5 KB gzip of 20,000 rollouts, tried by hand with envsched ingest) one unfinished line
// waited on for ever: none of its rollouts counted and nothing said so. Now it is quarantined
// whole, once, with the reason; its later growth is skipped.
// A parquet file named .jsonl in catalog/ is said apart the same way.
func TestCompressedJSONLIsQuarantinedWhole(t *testing.T) {
	gz := func(from, n int) string {
		var b bytes.Buffer
		z := gzip.NewWriter(&b)
		for i := from; i < from+n; i++ {
			fmt.Fprintf(z, `{"env":"e","task":"t%d","reward":%d}`+"\n", i%100, i%2)
		}
		z.Close()
		return b.String()
	}
	e := newEnv(t, Options{ReadCatalogFile: readStray})
	e.write("catalog/tasks.jsonl", `{"env":"e","task":"t1"}`+"\n")
	e.write("catalog/train.jsonl", "PAR1\x15\x04 a parquet file's bytes")
	e.write("rollouts/r.jsonl", gz(0, 20000))
	e.scan()
	e.append("rollouts/r.jsonl", gz(20000, 5000)) // a second gzip member
	e.scan()
	q := e.reasons()
	want := []string{"catalog/train.jsonl@0:" + ReasonCompressed("parquet"), "rollouts/r.jsonl@0:" + ReasonCompressed("gzip")}
	if strings.Join(q, "|") != strings.Join(want, "|") {
		t.Fatalf("%d quarantine entries, the first %q; want %q", len(q), q[:min(len(q), 3)], want)
	}
	if n := len(e.rollouts()); n != 0 {
		t.Errorf("%d rollouts stored from a gzip file", n)
	}
	if n := e.taskCount(); n != 1 {
		t.Errorf("%d tasks; want tasks.jsonl's one", n)
	}
}

// TestUTF16JSONLIsQuarantinedWhole: a .jsonl file written as UTF-16 (Windows PowerShell 5's >
// and Out-File), catalogue or rollouts, is quarantined whole, once, saying it is UTF-16. Read as
// lines, its NUL bytes made each line "line cut short by a crash (zeros follow it)" and its
// rollouts never counted, with nothing said of the encoding.
func TestUTF16JSONLIsQuarantinedWhole(t *testing.T) {
	utf16 := func(bigEndian bool, lines ...string) string {
		var b strings.Builder
		bom := "\xff\xfe"
		if bigEndian {
			bom = "\xfe\xff"
		}
		b.WriteString(bom)
		for _, c := range strings.Join(lines, "") {
			if bigEndian {
				b.WriteString("\x00" + string(c))
			} else {
				b.WriteString(string(c) + "\x00")
			}
		}
		return b.String()
	}
	e := newEnv(t, Options{ReadCatalogFile: readStray})
	e.write("catalog/tasks.jsonl", utf16(false, `{"env":"e","task":"t1"}`+"\r\n"))
	e.write("rollouts/r.jsonl", utf16(false, `{"env":"e","task":"t1","reward":1}`+"\n", `{"env":"e","task":"t2","reward":0}`+"\n"))
	e.write("rollouts/be.jsonl", utf16(true, `{"env":"e","task":"t1","reward":1}`+"\n"))
	e.scan()
	e.append("rollouts/r.jsonl", utf16(false, `{"env":"e","task":"t3","reward":1}`+"\n")[2:])
	e.scan()
	q := e.reasons()
	want := []string{"catalog/tasks.jsonl@0:" + ReasonCompressed("utf-16"), "rollouts/be.jsonl@0:" + ReasonCompressed("utf-16"),
		"rollouts/r.jsonl@0:" + ReasonCompressed("utf-16")}
	if strings.Join(q, "|") != strings.Join(want, "|") {
		t.Fatalf("quarantine %q; want %q", q, want)
	}
	if n := len(e.rollouts()); n != 0 {
		t.Errorf("%d rollouts stored from UTF-16 files", n)
	}
}
