package e2e

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/envsched/envsched/storage"
)

// The examples of PROTOCOL.md, taken from the document itself and run through the real
// daemon: what a trainer copies out of it works as written.

// docExamples returns the ```json blocks of PROTOCOL.md's section whose heading starts with
// heading ("## 3."), in order.
func docExamples(t *testing.T, heading string) []string {
	t.Helper()
	doc, err := os.ReadFile("../PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(doc), "\n"+heading)
	if !ok {
		t.Fatalf("PROTOCOL.md has no section %q", heading)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	var blocks []string
	for {
		var block string
		if _, sec, ok = strings.Cut(sec, "```json\n"); !ok {
			return blocks
		}
		block, sec, _ = strings.Cut(sec, "```")
		blocks = append(blocks, block)
	}
}

// sameShape reports the keys of example (a JSON object) that real lacks or holds with another
// JSON type, objects compared key by key and lists by their first element. Keys named "..."
// stand for the elided rest; a null in either stands for any value (the document's "object or
// null"); an object under the key "envs" is keyed by environment names, and each of its values is
// compared with the example's first.
func sameShape(path string, example, real any) []string {
	if example == nil || real == nil {
		return nil
	}
	switch ex := example.(type) {
	case map[string]any:
		r, ok := real.(map[string]any)
		if !ok {
			return []string{path + ": not an object"}
		}
		var bad []string
		if strings.HasSuffix(path, ".envs") {
			for _, v := range ex {
				for k, rv := range r {
					bad = append(bad, sameShape(path+"."+k, v, rv)...)
				}
				break
			}
			return bad
		}
		for k, v := range ex {
			if k == "..." {
				continue
			}
			rv, ok := r[k]
			if !ok {
				bad = append(bad, path+"."+k+": missing")
				continue
			}
			bad = append(bad, sameShape(path+"."+k, v, rv)...)
		}
		return bad
	case []any:
		r, ok := real.([]any)
		if !ok {
			return []string{path + ": not a list"}
		}
		if len(ex) > 0 && len(r) > 0 {
			return sameShape(path+"[0]", ex[0], r[0])
		}
		return nil
	default:
		if ek, rk := jsonKind(ex), jsonKind(real); ek != rk {
			return []string{path + ": " + rk + ", the example has " + ek}
		}
		return nil
	}
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	}
	return "other"
}

// TestProtocolExamplesRun drops PROTOCOL.md's catalogue, rollout and request examples into an
// exchange directory as written and checks what comes back against the document: the batch,
// error file and status.json have every key of their examples, with the same types, and the error
// file says what the example says; section 8's snapshot example is played as another tool would
// (snapshotExample). The request example excludes an environment the catalogue
// does not hold, as a trainer's fixed configuration may; it was refused ("exclude_envs names
// unknown environment"), though "never these environments" holds of it trivially.
func TestProtocolExamplesRun(t *testing.T) {
	dir := t.TempDir()
	catalogue := docExamples(t, "## 3.")
	rollouts := docExamples(t, "## 4.")
	requests := docExamples(t, "## 5.")
	batches := docExamples(t, "## 6.")
	statuses := docExamples(t, "## 7.")
	if len(catalogue) != 1 || len(rollouts) != 1 || len(requests) != 1 || len(batches) != 2 || len(statuses) != 1 {
		t.Fatalf("PROTOCOL.md's examples moved: %d catalogue, %d rollout, %d request, %d batch, %d status blocks",
			len(catalogue), len(rollouts), len(requests), len(batches), len(statuses))
	}
	must(t, os.MkdirAll(filepath.Join(dir, "catalog"), 0o755))
	must(t, os.MkdirAll(filepath.Join(dir, "rollouts"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "catalog", "example.jsonl"), []byte(catalogue[0]), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "rollouts", "example.jsonl"), []byte(rollouts[0]), 0o644))
	d := start(t, dir, opts{}) // with the harness's catalogue of 388 tasks beside the example's two
	d.waitReady()

	// The request example, under the example's ID.
	writeRequest(t, dir, "run1-000041", requests[0])
	data := waitBatch(t, d, "run1-000041")
	var batch struct {
		Step      int            `json:"step"`
		Size      int            `json:"size"`
		GroupSize int            `json:"group_size"`
		Envs      map[string]int `json:"envs"`
		Tasks     []struct {
			Env    string `json:"env"`
			TaskID string `json:"task_id"`
		} `json:"tasks"`
	}
	must(t, json.Unmarshal(data, &batch))
	if batch.Step != 41 || batch.Size != 64 || batch.GroupSize != 8 || len(batch.Tasks) != 64 {
		t.Errorf("the request example got step %d, size %d, group_size %d, %d tasks; want 41, 64, 8, 64",
			batch.Step, batch.Size, batch.GroupSize, len(batch.Tasks))
	}
	if _, ok := batch.Envs["tau2-telecom"]; ok {
		t.Errorf("an excluded environment in the batch: %v", batch.Envs)
	}
	var exBatch, realBatch any
	must(t, json.Unmarshal([]byte(batches[0]), &exBatch))
	must(t, json.Unmarshal(data, &realBatch))
	for _, bad := range sameShape("batch", exBatch, realBatch) {
		t.Errorf("the batch differs from PROTOCOL.md's example: %s", bad)
	}
	checkBatch(t, "PROTOCOL.md's batch example", []byte(batches[0]))
	checkBatch(t, "the answer to the request example", data)
	// The example answers the same ID with no seed asked: its seed is the ID's (it was not).
	var exIDs, realIDs struct {
		ID   string
		Seed json.Number
	}
	must(t, json.Unmarshal([]byte(batches[0]), &exIDs))
	must(t, json.Unmarshal(data, &realIDs))
	if exIDs != realIDs {
		t.Errorf("PROTOCOL.md's batch example has id %s and seed %s; the real answer to that ID %s and %s",
			exIDs.ID, exIDs.Seed, realIDs.ID, realIDs.Seed)
	}

	// Both example tasks of the catalogue are there under the names the document gives them.
	writeRequest(t, dir, "examples", `{"size": 2, "envs": ["tau2-retail", "bfcl-multi_turn_base"]}`)
	must(t, json.Unmarshal(waitBatch(t, d, "examples"), &batch))
	got := map[string]bool{}
	for _, task := range batch.Tasks {
		got[task.Env+"/"+task.TaskID] = true
	}
	if !got["tau2-retail/17"] || !got["bfcl-multi_turn_base/3"] {
		t.Errorf("the catalogue example's tasks: got %v; want tau2-retail/17 and bfcl-multi_turn_base/3", got)
	}

	// The error example: the same request, the same message.
	var exErr struct{ ID, Error string }
	must(t, json.Unmarshal([]byte(batches[1]), &exErr))
	writeRequest(t, dir, exErr.ID, `{"grup_size": 8}`)
	errPath := filepath.Join(dir, "batches", exErr.ID+".error.json")
	var errData []byte
	waitUntil(t, "the error file", func() bool {
		var err error
		errData, err = os.ReadFile(errPath)
		return err == nil
	})
	var realErr struct{ ID, Error string }
	must(t, json.Unmarshal(errData, &realErr))
	if realErr != exErr {
		t.Errorf("the error file of {\"grup_size\": 8}:\n%s\nPROTOCOL.md's example:\n%s", errData, batches[1])
	}

	// status.json: the example's rollouts are counted, and its keys are the example's.
	st, err := readStatus(dir)
	must(t, err)
	if st.Rollouts != 3 || st.Quarantined != 0 {
		t.Errorf("the rollout example: %d rollouts, %d quarantined; want 3 and 0", st.Rollouts, st.Quarantined)
	}
	var exStatus, realStatus any
	must(t, json.Unmarshal([]byte(statuses[0]), &exStatus))
	raw, err := os.ReadFile(filepath.Join(dir, "status.json"))
	must(t, err)
	must(t, json.Unmarshal(raw, &realStatus))
	for _, bad := range sameShape("status", exStatus, realStatus) {
		t.Errorf("status.json differs from PROTOCOL.md's example: %s", bad)
	}

	// Section 8's example, as a tool other than envsched's readers would play it: the request
	// written under an unfinished name and renamed, the copy waited for, opened and unlinked.
	snapshotExample(t, dir, st.Rollouts)

	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}

// snapshotExample plays PROTOCOL.md section 8's example against the running daemon of dir: the
// names are the example's (the test fails when the document's example changes), and the copy
// must be a database holding the rollouts status.json counts.
func snapshotExample(t *testing.T, dir string, rollouts int64) {
	t.Helper()
	doc, err := os.ReadFile("../PROTOCOL.md")
	must(t, err)
	_, sec, _ := strings.Cut(string(doc), "\n## 8.")
	sec, _, _ = strings.Cut(sec, "\n## ")
	_, example, _ := strings.Cut(sec, "### Example")
	for _, name := range []string{"`DIR/snapshots/.report-77.want.tmp`", "`report-77.want`", "`report-77.db`", "`report-77.error`"} {
		if !strings.Contains(example, name) {
			t.Fatalf("PROTOCOL.md's snapshot example moved: it no longer names %s:\n%s", name, example)
		}
	}
	snaps := filepath.Join(dir, "snapshots")
	tmp := filepath.Join(snaps, ".report-77.want.tmp")
	must(t, os.WriteFile(tmp, nil, 0o644))
	must(t, os.Rename(tmp, filepath.Join(snaps, "report-77.want")))
	copyPath := filepath.Join(snaps, "report-77.db")
	waitUntil(t, "report-77.db or report-77.error", func() bool {
		if msg, err := os.ReadFile(filepath.Join(snaps, "report-77.error")); err == nil {
			t.Fatalf("the snapshot example was refused: %s", msg)
		}
		_, err := os.Stat(copyPath)
		return err == nil
	})
	db, err := storage.Open(copyPath, storage.Options{ReadOnly: true, Timeout: 5 * time.Second})
	must(t, err)
	defer db.Close()
	must(t, os.Remove(copyPath)) // the open copy stays readable
	c, err := db.Counters()
	must(t, err)
	if c.Rollouts != rollouts {
		t.Errorf("the snapshot example's copy holds %d rollouts; status.json counts %d", c.Rollouts, rollouts)
	}
	waitUntil(t, "the daemon to remove report-77.want once answered (section 8)", func() bool {
		_, err := os.Stat(filepath.Join(snaps, "report-77.want"))
		return errors.Is(err, fs.ErrNotExist)
	})
}

// TestTrainerOrders plays the original contract's request rules in the orders a trainer written
// from it alone may use: a request before any catalogue (an error file, and nothing else changes:
// the next answer is still step 1), the same request written again once the catalogue is there,
// rollouts naming a request not answered yet, several requests at once, an explicit step and the
// default after it, unfinished names in every folder, and an ID used again after the trainer
// deleted its request and batch.
func TestTrainerOrders(t *testing.T) {
	dir := t.TempDir()
	d := startCmd(t, dir, "", nil, execCommand([]string{"run", "--dir", dir, "--poll-interval", "20ms",
		"--status-interval", "100ms", "--batch-size", "2"}))
	d.waitReady()
	batchFile := func(id string) string { return filepath.Join(dir, "batches", id+".json") }
	step := func(data []byte) int {
		var b struct{ Step int }
		must(t, json.Unmarshal(data, &b))
		return b.Step
	}

	writeRequest(t, dir, "early", `{}`)
	errFile := filepath.Join(dir, "batches", "early.error.json")
	waitUntil(t, "early.error.json", func() bool { _, err := os.Stat(errFile); return err == nil })
	var refused struct{ ID, Error string }
	data, err := os.ReadFile(errFile)
	must(t, err)
	if must(t, json.Unmarshal(data, &refused)); refused.ID != "early" || refused.Error == "" {
		t.Errorf("a request before any catalogue: %s; want {\"id\": \"early\", \"error\": ...}", data)
	}

	var cat strings.Builder
	for i := range 10 {
		cat.WriteString(`{"env": "env-` + string(rune('a'+i%2)) + `", "task_id": ` + string(rune('0'+i)) + "}\n")
	}
	must(t, os.WriteFile(filepath.Join(dir, "catalog", ".tasks.jsonl.tmp"), []byte(cat.String()), 0o644))
	must(t, os.Rename(filepath.Join(dir, "catalog", ".tasks.jsonl.tmp"), filepath.Join(dir, "catalog", "tasks.jsonl")))
	must(t, os.WriteFile(filepath.Join(dir, "rollouts", "r.jsonl"),
		[]byte(`{"env": "env-a", "task_id": 0, "reward": 1, "request_id": "later"}`+"\n"), 0o644))
	for _, name := range []string{".r.jsonl", "r.jsonl.tmp"} { // unfinished writes: never read
		must(t, os.WriteFile(filepath.Join(dir, "rollouts", name), []byte(`{"env": "env-a", "task_id": 1, "reward": 1}`+"\n"), 0o644))
	}
	for _, name := range []string{".hidden.json", "h.json.tmp"} {
		must(t, os.WriteFile(filepath.Join(dir, "requests", name), []byte(`{}`), 0o644))
	}

	writeRequest(t, dir, "early", `{}`) // written again, now that there is a catalogue
	if got := step(waitBatch(t, d, "early")); got != 1 {
		t.Errorf("the first answer after a refused request: step %d; want 1 (a refusal changes nothing)", got)
	}
	waitUntil(t, "the error file removed", func() bool { _, err := os.Stat(errFile); return errors.Is(err, fs.ErrNotExist) })

	writeRequest(t, dir, "later", `{"size": 2}`)
	later := waitBatch(t, d, "later")
	if got, seen := step(later), rolloutsSeen(t, later); got != 2 || seen != 1 {
		t.Errorf("the second answer: step %d, rollouts_seen %d; want 2 and 1 (the rollout naming it before it was answered counts, the unfinished files do not)", got, seen)
	}

	for _, id := range []string{"p1", "p2", "p3"} {
		writeRequest(t, dir, id, `{"size": 1}`)
	}
	steps := map[int]bool{}
	for _, id := range []string{"p1", "p2", "p3"} {
		steps[step(waitBatch(t, d, id))] = true
	}
	if !steps[3] || !steps[4] || !steps[5] {
		t.Errorf("three requests at once: steps %v; want 3, 4 and 5", steps)
	}
	writeRequest(t, dir, "x", `{"step": 10}`)
	writeRequest(t, dir, "y", `{}`)
	if a, b := step(waitBatch(t, d, "x")), step(waitBatch(t, d, "y")); a != 10 || b != 11 {
		t.Errorf("step 10 asked, then none: steps %d and %d; want 10 and 11", a, b)
	}

	must(t, os.Remove(filepath.Join(dir, "requests", "later.json")))
	must(t, os.Remove(batchFile("later")))
	writeRequest(t, dir, "later", `{"size": 1, "step": 99}`)
	if again := waitBatch(t, d, "later"); string(again) != string(later) {
		t.Errorf("an ID used again after its request and batch were deleted: another answer\n%s\n%s", later, again)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "batches"))
	must(t, err)
	for _, e := range entries {
		if strings.Contains(e.Name(), "hidden") || strings.HasPrefix(e.Name(), "h.") {
			t.Errorf("an unfinished request name was answered: %s", e.Name())
		}
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}

// checkBatch checks what the contract says of every batch: size tasks, ranks 1, 2, ... in
// order, score = exploit + coverage - penalty, predictions in their ranges, envs counting the
// tasks of each environment.
func checkBatch(t *testing.T, what string, data []byte) {
	t.Helper()
	var b struct {
		Size  int            `json:"size"`
		Envs  map[string]int `json:"envs"`
		Tasks []struct {
			Env               string  `json:"env"`
			Rank              int     `json:"rank"`
			Score             float64 `json:"score"`
			Exploit           float64 `json:"exploit"`
			Coverage          float64 `json:"coverage"`
			Penalty           float64 `json:"penalty"`
			PredictedMean     float64 `json:"predicted_mean"`
			PredictedVariance float64 `json:"predicted_variance"`
			PDegenerate       float64 `json:"p_degenerate"`
		} `json:"tasks"`
	}
	must(t, json.Unmarshal(data, &b))
	if len(b.Tasks) != b.Size {
		t.Errorf("%s: %d tasks, size %d", what, len(b.Tasks), b.Size)
	}
	counts := map[string]int{}
	for i, task := range b.Tasks {
		counts[task.Env]++
		if task.Rank != i+1 {
			t.Errorf("%s: task %d has rank %d", what, i, task.Rank)
		}
		if d := task.Score - (task.Exploit + task.Coverage - task.Penalty); d > 1e-5 || d < -1e-5 {
			t.Errorf("%s: task %d: score %v is not exploit %v + coverage %v - penalty %v", what, i, task.Score,
				task.Exploit, task.Coverage, task.Penalty)
		}
		if task.PredictedMean < 0 || task.PredictedMean > 1 || task.PredictedVariance < 0 || task.PredictedVariance > 0.25 ||
			task.PDegenerate < 0 || task.PDegenerate > 1 {
			t.Errorf("%s: task %d: predictions out of range: %+v", what, i, task)
		}
	}
	if len(counts) != len(b.Envs) {
		t.Errorf("%s: envs %v; the tasks hold %v", what, b.Envs, counts)
	}
	for env, n := range counts {
		if b.Envs[env] != n {
			t.Errorf("%s: envs %v; the tasks hold %v", what, b.Envs, counts)
			break
		}
	}
}
