package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestBadCatalogueFilesHoldOnlyTheirTasks: a JSON lines catalogue replaced by a file whose rows
// are all bad (a CSV written under its name) was taken for one that lists no task: every task it
// had listed was retired, and a request for all of them got an error file. A parquet file that
// cannot be read held back every retirement instead, of every file. Now each holds back its own
// tasks only: the tasks the other files leave out are retired (never chosen), and the log says
// which file holds its tasks back.
func TestBadCatalogueFilesHoldOnlyTheirTasks(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "catalog")
	must(t, os.MkdirAll(cat, 0o755))
	var a, b strings.Builder
	for i := range 4 {
		fmt.Fprintf(&a, `{"env":"e","task_id":"a%d"}`+"\n", i)
		fmt.Fprintf(&b, `{"env":"e","task_id":"b%d"}`+"\n", i)
	}
	must(t, os.WriteFile(filepath.Join(cat, "a.jsonl"), []byte(a.String()), 0o644))
	must(t, os.WriteFile(filepath.Join(cat, "b.jsonl"), []byte(b.String()), 0o644))
	replace := func(name, data string) {
		must(t, os.WriteFile(filepath.Join(cat, "."+name+".tmp"), []byte(data), 0o644))
		must(t, os.Rename(filepath.Join(cat, "."+name+".tmp"), filepath.Join(cat, name)))
	}
	type row struct {
		Env  string `parquet:"env"`
		Task string `parquet:"task_id"`
	}
	var c strings.Builder
	w := parquet.NewGenericWriter[row](&c)
	for i := range 4 {
		_, err := w.Write([]row{{"e", fmt.Sprint("c", i)}})
		must(t, err)
	}
	must(t, w.Close())
	replace("c.parquet", c.String())

	d := startCmd(t, dir, "", nil, exec.Command(binary, "run", "--dir", dir, "--poll-interval", "20ms",
		"--status-interval", "200ms", "--log-format", "json"))
	d.waitReady()
	writeRequest(t, dir, "r1", `{"size": 12}`)
	waitAnswer(t, d, "r1")
	replace("a.jsonl", "env,task_id\ne,a0\ne,a1\ne,a2\ne,a3\n")
	replace("c.parquet", "PAR1 not parquet PAR1")
	replace("b.jsonl", `{"env":"e","task_id":"b0"}`+"\n"+`{"env":"e","task_id":"b1"}`+"\n") // b2, b3 removed
	answer := func(id string) []string {
		t.Helper()
		writeRequest(t, dir, id, `{"size": 10}`)
		var got struct {
			Tasks []struct {
				Task string `json:"task_id"`
			} `json:"tasks"`
		}
		must(t, json.Unmarshal(waitAnswer(t, d, id), &got))
		var tasks []string
		for _, task := range got.Tasks {
			tasks = append(tasks, task.Task)
		}
		slices.Sort(tasks)
		return tasks
	}
	want := []string{"a0", "a1", "a2", "a3", "b0", "b1", "c0", "c1", "c2", "c3"}
	if tasks := answer("r2"); !slices.Equal(tasks, want) {
		t.Errorf("answer %v; want %v (the bad files' tasks kept, b2 and b3 retired)", tasks, want)
	}
	replace("c.parquet", c.String()) // readable again: a.jsonl's bad rows alone hold a's tasks
	if tasks := answer("r3"); !slices.Equal(tasks, want) {
		t.Errorf("c.parquet readable again: answer %v; want %v", tasks, want)
	}
	log := d.stderr.String()
	for _, want := range []string{`"msg":"catalogue file has bad rows and no good one; the tasks it listed are not retired while it stays so`,
		`"msg":"catalogue file cannot be read as its format; the tasks it listed are not retired while it stays so`} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not say %s:\n%s", want, tail(log, 3000))
		}
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d\n%s", code, d.stderr.String())
	}
}
