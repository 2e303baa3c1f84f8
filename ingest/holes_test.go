package ingest

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/envsched/envsched/record"
)

// hole is the size of the sparse runs these tests make: read byte by byte it would take
// seconds, and show in the process's read count.
const hole = 4 << 30

// TestSparseHolesAreNotRead: a rollout or catalogue file with a hole (a sparse run of NUL bytes
// the file system does not store: `truncate -s 10G`) inside a line is skipped past without
// reading it. The line holding it is quarantined once as too long, the lines before and after
// count, and nothing is read again at later scans or after a restart. The bytes the process
// read (rchar of /proc/self/io) stay far below the hole: every byte of it was read before.
func TestSparseHolesAreNotRead(t *testing.T) {
	const f = "rollouts/sparse.jsonl"
	lines := func(tasks ...string) string {
		var b strings.Builder
		for _, task := range tasks {
			b.WriteString(`{"env":"e","task":"` + task + `","reward":1}` + "\n")
		}
		return b.String()
	}
	cases := []struct {
		name       string
		run        func(e *env)
		want       []string
		quarantine []string
	}{
		{"a hole inside a line, then lines", func(e *env) {
			e.write(f, lines("a"))
			e.grow(f, hole)
			e.append(f, "\n"+lines("b"))
			e.scan()
		}, []string{"e/a=1", "e/b=1"}, []string{f + "@34:line too long"}},
		{"a file ending in a hole, appended to after a restart", func(e *env) {
			e.write(f, lines("a"))
			e.grow(f, hole)
			e.scan()
			e.scan()
			e.reopen()
			e.scan()
			e.append(f, "tail\n"+lines("b"))
			e.scan()
		}, []string{"e/a=1", "e/b=1"}, []string{f + "@34:line too long"}},
		{"a hole at the start of a file", func(e *env) {
			e.grow(f, hole)
			e.append(f, "\n"+lines("a"))
			e.scan()
		}, []string{"e/a=1"}, []string{f + "@0:line too long"}},
		{"a catalogue with a hole, listed again when another catalogue comes", func(e *env) {
			e.write("catalog/c.jsonl", `{"env":"e","task":"t"}`+"\n")
			e.grow("catalog/c.jsonl", hole)
			e.append("catalog/c.jsonl", "\n"+`{"env":"e","task":"u"}`+"\n")
			e.scan()
			e.write("catalog/d.jsonl", `{"env":"e","task":"v"}`+"\n")
			e.scan()
			e.write(f, lines("t"))
			e.scan()
		}, []string{"e/t=1"}, []string{"catalog/c.jsonl@23:line too long"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Options{})
			before := readBytes(t)
			tc.run(e)
			if got := e.tasks(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("stored %v, want %v", got, tc.want)
			}
			if got := e.reasons(); !reflect.DeepEqual(got, tc.quarantine) {
				t.Errorf("quarantined %v, want %v", got, tc.quarantine)
			}
			e.reopen()
			if s := e.scan(); s.Rollouts != 0 || s.Quarantined != 0 {
				t.Errorf("a scan after reopening stored %+v; want nothing new", s)
			}
			if read := readBytes(t) - before; read > hole/16 {
				t.Errorf("read %d bytes of files holding %d bytes of holes: the holes were read", read, hole)
			}
		})
	}
}

// grow extends the file rel by n bytes of hole (ftruncate: nothing is written). The test is
// skipped where the file system stores them as data.
func (e *env) grow(rel string, n int64) {
	e.t.Helper()
	p := e.path(rel)
	fi, err := os.Stat(p)
	if os.IsNotExist(err) {
		e.write(rel, "")
		fi, err = os.Stat(p)
	}
	if err != nil {
		e.t.Fatal(err)
	}
	if err := os.Truncate(p, fi.Size()+n); err != nil {
		e.t.Skipf("no sparse files here: %v", err)
	}
	g, err := os.Open(p)
	if err != nil {
		e.t.Fatal(err)
	}
	defer g.Close()
	if off, err := g.Seek(fi.Size(), seekHole); err != nil || off >= fi.Size()+n {
		e.t.Skipf("the file system keeps no holes (%d, %v)", off, err)
	}
}

// readBytes is the bytes this process has read so far (rchar: every read and pread).
func readBytes(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/io")
	if err != nil {
		t.Skipf("no /proc/self/io: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "rchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("no rchar in /proc/self/io")
	return 0
}

// TestSparseWholeFileIsNotReadForItsHash: a catalogue file read whole (a .parquet name) with a
// 4 GB hole is hashed without reading the hole (its hash was over 4 GB of NUL bytes: seconds,
// at its first read and at every check). A chmod reads nothing again; a byte written inside
// the hole, the size and modification time kept, is seen by the hash and read again.
func TestSparseWholeFileIsNotReadForItsHash(t *testing.T) {
	const f = "catalog/sparse.parquet"
	reads := 0
	readOnce := func(string) ([]record.Task, error) { reads++; return []record.Task{{Env: "e", Task: "t"}}, nil }
	clock := &testClock{at: time.Now()}
	e := newEnv(t, Options{ReadCatalogFile: readOnce, settleAfter: time.Millisecond, now: clock.now})
	before := readBytes(t)
	e.write(f, "PAR1 head")
	e.grow(f, hole)
	e.append(f, "tail PAR1")
	e.scan()
	fi, err := os.Stat(e.path(f))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(e.path(f), 0o600); err != nil {
		t.Fatal(err)
	}
	clock.advance(hashEvery)
	e.scan()
	if reads != 1 {
		t.Errorf("a chmod read the file again (%d reads)", reads)
	}
	if read := readBytes(t) - before; read > hole/16 {
		t.Errorf("read %d bytes of a file holding a %d-byte hole: the hole was hashed", read, hole)
	}
	g, err := os.OpenFile(e.path(f), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.WriteAt([]byte("x"), hole/2); err != nil {
		t.Fatal(err)
	}
	g.Close()
	if err := os.Chtimes(e.path(f), fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	clock.advance(hashEvery)
	e.scan()
	if reads != 2 {
		t.Errorf("a byte written in the hole, size and time kept: %d reads; want 2", reads)
	}
}

// TestLongSkipReportsProgressAndStops: a line too long, written out (not a hole), returns
// nothing while it is skipped to its newline, which for 10 GB takes seconds. The skip reports
// the bytes passed as progress and stops when the scan's context is done: a SIGTERM waited for
// the end of the line, and the daemon logged no progress. A scan stopped inside it and run
// again counts everything once.
func TestLongSkipReportsProgressAndStops(t *testing.T) {
	const f = "rollouts/long.jsonl"
	line := func(task string) string { return `{"env":"e","task":"` + task + `","reward":1}` + "\n" }
	var done []int64
	var cancel context.CancelFunc
	opt := Options{maxLine: 64, readBuf: 16, tickBytes: 1024, Progress: func(p Progress) {
		done = append(done, p.Done)
		if cancel != nil {
			cancel()
		}
	}}
	e := newEnv(t, opt)
	e.write(f, line("a")+strings.Repeat("x", 100_000)+"\n"+line("b"))
	ctx, stop := context.WithCancel(context.Background())
	cancel = stop
	if _, err := e.in.Scan(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("scan cancelled inside a long line: %v; want context.Canceled", err)
	}
	if len(done) != 1 || done[0] < 1024 {
		t.Errorf("progress inside the long line: %v; want one report of at least 1024 bytes", done)
	}
	cancel, done = nil, nil
	e.scan()
	if len(done) < 90 {
		t.Errorf("%d progress reports over 100 kB skipped 1 kB at a time; want about 97", len(done))
	}
	for i := 1; i < len(done); i++ {
		if done[i] < done[i-1] {
			t.Errorf("progress went back: %v", done)
			break
		}
	}
	if got := e.tasks(); !reflect.DeepEqual(got, []string{"e/a=1", "e/b=1"}) {
		t.Errorf("stored %v", got)
	}
	if got := e.reasons(); !reflect.DeepEqual(got, []string{f + "@34:line too long"}) {
		t.Errorf("quarantined %v", got)
	}
}

// TestFileSourceStopsWhereTheFileWasRewritten: a file rewritten in place (truncated, then
// written again longer) between two reads of a fileSource is not read on at the old position
// in the new content: the read ends there (io.EOF), and the next scan's content check reads the
// new content from its start. Bytes appended between two reads are read on as before.
func TestFileSourceStopsWhereTheFileWasRewritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	old := strings.Repeat(`{"env":"e","task":"old","reward":1}`+"\n", 100)
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src := &fileSource{f: f, limit: -1, prev: []byte{}}
	buf := make([]byte, 500)
	for range 2 {
		if n, err := src.Read(buf); n != len(buf) || err != nil {
			t.Fatalf("read %d, %v", n, err)
		}
	}
	w, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteString(`{"env":"e","task":"more","reward":1}` + "\n")
	w.Close()
	if n, err := src.Read(buf); n != len(buf) || err != nil {
		t.Fatalf("after an append: read %d, %v; want a whole chunk", n, err)
	}
	if err := os.WriteFile(path, []byte(strings.Repeat(`{"env":"e","task":"new","reward":0}`+"\n", 200)), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := src.Read(buf); n != 0 || err != io.EOF {
		t.Errorf("after a rewrite in place: read %d, %v; want 0, EOF", n, err)
	}
	if n, err := src.Read(buf); n != 0 || err != io.EOF {
		t.Errorf("read again: %d, %v; want 0, EOF", n, err)
	}
}
