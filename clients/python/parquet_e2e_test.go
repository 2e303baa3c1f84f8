package python_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/envsched/envsched/internal/testbin"
)

// The columns of a verl training file (verl's examples/data_preprocess scripts write them through
// pandas and pyarrow).
type verlMsg struct {
	Content string `parquet:"content"`
	Role    string `parquet:"role"`
}

type verlReward struct {
	GroundTruth string `parquet:"ground_truth"`
	Style       string `parquet:"style"`
}

type verlExtra struct {
	Index int64  `parquet:"index"`
	Split string `parquet:"split"`
}

type verlRow struct {
	DataSource *string    `parquet:"data_source,optional"`
	Prompt     []verlMsg  `parquet:"prompt,list"`
	Ability    string     `parquet:"ability"`
	Reward     verlReward `parquet:"reward_model"`
	Extra      verlExtra  `parquet:"extra_info"`
}

// writeVerlParquet writes n rows (env gsm8k for even rows, math for odd, index = row) and
// returns the path; rows listed in noEnv lack data_source.
func writeVerlParquet(t *testing.T, path string, n int, noEnv ...int) {
	t.Helper()
	rows := make([]verlRow, n)
	for i := range rows {
		env := []string{"gsm8k", "math"}[i%2]
		rows[i] = verlRow{DataSource: &env, Ability: "math",
			Prompt: []verlMsg{{Role: "user", Content: fmt.Sprintf("What is %d + %d?", i, i)}},
			Reward: verlReward{GroundTruth: fmt.Sprint(2 * i), Style: "rule"},
			Extra:  verlExtra{Index: int64(i), Split: "train"}}
	}
	for _, i := range noEnv {
		rows[i].DataSource = nil
	}
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func runCmd(bin string, args ...string) (string, int) {
	out, err := exec.Command(bin, args...).CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	}
	return string(out), 0
}

func TestCatalogImportParquetCommand(t *testing.T) {
	bin := testbin.Envsched(t)
	src, dir := t.TempDir(), t.TempDir()
	bad := filepath.Join(src, "train.parquet")
	writeVerlParquet(t, bad, 30, 6, 21)

	out, code := runCmd(bin, "catalog", "import", bad, "--dir", dir)
	if code != 1 || !strings.Contains(out, "row 7: missing env") || !strings.Contains(out, "row 22: missing env") {
		t.Fatalf("import of a file with bad rows: exit %d, output:\n%s", code, out)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "catalog")); len(entries) != 0 {
		t.Fatalf("a refused import wrote %d files", len(entries))
	}

	out, code = runCmd(bin, "catalog", "import", bad, "--dir", dir, "--skip-bad")
	if code != 0 || !strings.Contains(out, "imported 28 tasks in 2 environments") {
		t.Fatalf("--skip-bad: exit %d, output:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "catalog", "train.jsonl")); err != nil {
		t.Fatalf("--skip-bad did not write train.jsonl: %v", err)
	}

	good := filepath.Join(src, "more.parquet")
	writeVerlParquet(t, good, 4)
	out, code = runCmd(bin, "catalog", "import", good, "--dir", dir, "--name", "more.parquet")
	if code != 0 {
		t.Fatalf("import of a good parquet file: exit %d\n%s", code, out)
	}
	a, _ := os.ReadFile(good)
	b, _ := os.ReadFile(filepath.Join(dir, "catalog", "more.parquet"))
	if !bytes.Equal(a, b) {
		t.Fatal("the parquet file was not copied byte for byte")
	}
}

// TestDaemonReadsParquetCatalogue: a verl parquet catalogue gives envsched the right envs, ids and
// texts; a bad parquet file is quarantined and changes nothing else.
func TestDaemonReadsParquetCatalogue(t *testing.T) {
	bin := testbin.Envsched(t)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "catalog"), 0o755)
	writeVerlParquet(t, filepath.Join(dir, "catalog", "train.parquet"), 40)
	d := startDaemon(t, bin, dir)

	tasks := askBatch(t, dir, "pq-1", `{"size": 20, "envs": ["math"]}`)
	if len(tasks) != 20 {
		t.Fatalf("got %d tasks, want all 20 math tasks", len(tasks))
	}
	for _, task := range tasks {
		i, err := strconv.Atoi(task.TaskID)
		if task.Env != "math" || err != nil || i%2 != 1 {
			t.Errorf("task %s/%s: the math rows are the odd indexes", task.Env, task.TaskID)
		}
	}

	os.WriteFile(filepath.Join(dir, "catalog", "broken.parquet"), []byte("PAR1 not really"), 0o644)
	askBatch(t, dir, "pq-2", `{"size": 1}`) // the barrier reads the catalogue first
	var s status
	waitFor(t, "status after pq-2", func() bool {
		s = readStatus(t, dir)
		return s.LastRequest != nil && *s.LastRequest == "pq-2"
	})
	var full struct {
		Tasks int64 `json:"tasks"`
		Envs  int64 `json:"envs"`
	}
	data, _ := os.ReadFile(filepath.Join(dir, "status.json"))
	json.Unmarshal(data, &full)
	if s.Quarantined != 1 || full.Tasks != 40 || full.Envs != 2 {
		t.Errorf("after a bad parquet file: quarantined %d, tasks %d, envs %d; want 1, 40, 2",
			s.Quarantined, full.Tasks, full.Envs)
	}
	d.stop(t)
}

type batchTask struct {
	Env    string `json:"env"`
	TaskID string `json:"task_id"`
}

// askBatch writes request id atomically and returns the tasks of its answer.
func askBatch(t *testing.T, dir, id, body string) []batchTask {
	t.Helper()
	tmp := filepath.Join(dir, "requests", "."+id+".json.tmp")
	os.WriteFile(tmp, []byte(body), 0o644)
	os.Rename(tmp, filepath.Join(dir, "requests", id+".json"))
	var b struct {
		Tasks []batchTask `json:"tasks"`
	}
	waitFor(t, "batch "+id, func() bool {
		if data, err := os.ReadFile(filepath.Join(dir, "batches", id+".error.json")); err == nil {
			t.Fatalf("request %s refused: %s", id, data)
		}
		data, err := os.ReadFile(filepath.Join(dir, "batches", id+".json"))
		return err == nil && json.Unmarshal(data, &b) == nil
	})
	return b.Tasks
}

// TestIngestCommandReadsParquet: the one-shot `envsched ingest` reads parquet catalogues too.
func TestIngestCommandReadsParquet(t *testing.T) {
	bin := testbin.Envsched(t)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "catalog"), 0o755)
	writeVerlParquet(t, filepath.Join(dir, "catalog", "train.parquet"), 40)
	out, code := runCmd(bin, "ingest", "--dir", dir)
	if code != 0 || !strings.Contains(out, "40 catalogue tasks (40 new tasks)") {
		t.Fatalf("envsched ingest: exit %d\n%s", code, out)
	}
}
