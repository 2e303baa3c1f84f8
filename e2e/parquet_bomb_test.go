package e2e

import (
	bin "encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestParquetFooterBombIsQuarantined: a 20-byte parquet catalogue whose footer declares a list
// of 2^28 schema elements made the daemon allocate 24 GiB at once and die ("fatal error: out of
// memory", no recover can catch it), at every start, so it never answered again. Now the file is
// quarantined with a reason and the daemon, under a 4 GiB address-space limit, keeps answering.
func TestParquetFooterBombIsQuarantined(t *testing.T) {
	dir := t.TempDir()
	ensureCatalog(t, dir)
	footer := bin.AppendUvarint([]byte{0x15, 0x02, 0x19, 0xfc}, 1<<28)
	bomb := append([]byte("PAR1"), footer...)
	bomb = bin.LittleEndian.AppendUint32(bomb, uint32(len(footer)))
	bomb = append(bomb, "PAR1"...)
	must(t, os.WriteFile(filepath.Join(dir, "catalog", "bomb.parquet"), bomb, 0o644))

	quarantinedUnderLimit(t, dir, "bomb.parquet", "parquet footer")
}

// TestParquetRowBombIsQuarantined: a 460 KB parquet catalogue of 10,000,000 rows (one env and
// one text in a dictionary, the task ids delta encoded) kept within every bound checked before
// decoding, and the daemon decoded and held every row (11 GB for the same file through
// `catalog import`), so under a 4 GiB address-space limit it died at every start. Now the rows'
// decoded size is bounded as they are read: the file is quarantined with that reason and the
// daemon keeps answering.
func TestParquetRowBombIsQuarantined(t *testing.T) {
	dir := t.TempDir()
	ensureCatalog(t, dir)
	writeRowBomb(t, filepath.Join(dir, "catalog", "rows.parquet"), 10_000_000)

	quarantinedUnderLimit(t, dir, "rows.parquet", "rows decode into more than")
}

// quarantinedUnderLimit runs the real daemon on dir under a 4 GiB address-space limit and checks
// that it answers a request, counts the catalogue file name as quarantined, logs reason for it
// and stops cleanly on SIGTERM.
func quarantinedUnderLimit(t *testing.T, dir, name, reason string) {
	t.Helper()
	args := []string{"run", "--dir", dir, "--poll-interval", "20ms", "--status-interval", "200ms",
		"--log-format", "json", "--log-level", "debug"}
	cmd := exec.Command("/bin/sh", append([]string{"-c", `ulimit -v 4000000; exec "$0" "$@"`, binary}, args...)...)
	d := startCmd(t, dir, "", nil, cmd)
	d.waitReady()
	writeRequest(t, dir, "r1", `{"size": 4}`)
	if got := batchSize(t, waitAnswer(t, d, "r1")); got != 4 {
		t.Errorf("answer of %d tasks; want 4", got)
	}
	waitUntil(t, "the parquet file counted as quarantined", func() bool {
		st, err := readStatus(dir)
		return err == nil && st.Quarantined == 1
	})
	if log := d.stderr.String(); !strings.Contains(log, name) || !strings.Contains(log, reason) {
		t.Errorf("the log does not name the file and its reason:\n%s", tail(log, 3000))
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d\n%s", code, d.stderr.String())
	}
}

// writeRowBomb writes a parquet catalogue of n rows that all share one env and one text.
func writeRowBomb(t *testing.T, path string, n int) {
	type row struct {
		Env    string `parquet:"env,dict"`
		TaskID int64  `parquet:"task_id,delta"`
		Text   string `parquet:"text,dict"`
	}
	f, err := os.Create(path)
	must(t, err)
	w := parquet.NewGenericWriter[row](f)
	text := strings.Repeat("a task's text, the same for every row. ", 4)
	buf := make([]row, 4096)
	for i := 0; i < n; i += len(buf) {
		k := min(len(buf), n-i)
		for j := range k {
			buf[j] = row{Env: "bomb", TaskID: int64(i + j), Text: text}
		}
		_, err := w.Write(buf[:k])
		must(t, err)
	}
	must(t, w.Close())
	must(t, f.Close())
}

// TestBrokenParquetRetiresNothing: a parquet catalogue replaced (by rename) with a file that is
// not parquet at all was taken for one that lists no task: once the catalogue changed, every
// task it had listed was retired, and a request for all of them got an error file (1 eligible
// task). PROTOCOL.md says such a file retires nothing; now the daemon keeps them all.
func TestBrokenParquetRetiresNothing(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "catalog")
	must(t, os.MkdirAll(cat, 0o755))
	type row struct {
		Env  string `parquet:"env"`
		Task string `parquet:"task_id"`
	}
	f, err := os.Create(filepath.Join(cat, "a.parquet"))
	must(t, err)
	w := parquet.NewGenericWriter[row](f)
	for i := range 6 {
		_, err := w.Write([]row{{"e", fmt.Sprint("a", i)}})
		must(t, err)
	}
	must(t, w.Close())
	must(t, f.Close())

	d := startCmd(t, dir, "", nil, exec.Command(binary, "run", "--dir", dir, "--poll-interval", "20ms",
		"--status-interval", "200ms", "--log-format", "json")) // no tasks.jsonl beside: a.parquet's alone
	d.waitReady()
	writeRequest(t, dir, "r1", `{"size": 6}`)
	waitAnswer(t, d, "r1")
	must(t, os.WriteFile(filepath.Join(cat, ".a.parquet.tmp"), []byte("PAR1 not parquet PAR1"), 0o644))
	must(t, os.Rename(filepath.Join(cat, ".a.parquet.tmp"), filepath.Join(cat, "a.parquet")))
	must(t, os.WriteFile(filepath.Join(cat, "b.jsonl"), []byte(`{"env":"e","task_id":"b0"}`+"\n"), 0o644))
	writeRequest(t, dir, "r2", `{"size": 7}`)
	if got := batchSize(t, waitAnswer(t, d, "r2")); got != 7 {
		t.Errorf("answer of %d tasks; want 7", got)
	}
	if log := d.stderr.String(); !strings.Contains(log, "the tasks it listed are not retired") {
		t.Errorf("the log does not say that no task is retired:\n%s", tail(log, 3000))
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d\n%s", code, d.stderr.String())
	}
}
