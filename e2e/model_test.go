package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The daemon keeps its scheduling model in memory and updates it from its own commits; a
// process started on the database rebuilds it from the file. Both must answer alike. A daemon is
// fed random catalogue files and rollouts and SIGKILLed at random moments (while it ingests,
// while it answers) and started again; before each request it has ingested everything (a probe
// request), a consistent copy of its database is taken (the snapshot protocol), and the
// daemon's answer must equal, byte for byte but for created_at, what `envsched batch` answers
// on that copy: a process that read the whole model from the file.
func TestModelAnswersAsTheDatabase(t *testing.T) { modelAnswers(t, 30, nil) }

// The same with --exploit lasting, whose horizon is measured from every task's statistics at
// each request: a restarted daemon and a process reading the file must measure the same.
func TestModelAnswersAsTheDatabaseLasting(t *testing.T) {
	modelAnswers(t, 15, []string{"--exploit", "lasting"})
}

// modelAnswers is TestModelAnswersAsTheDatabase over the given number of requests, with the
// given selection flags given to the daemon and to `envsched batch` alike.
func modelAnswers(t *testing.T, requests int, flags []string) {
	rng := rand.New(rand.NewPCG(seed(t), 3))
	dir, copies := t.TempDir(), t.TempDir()
	d := start(t, dir, opts{args: flags})
	in := &inputs{rng: rng}
	kills := 0
	restart := func() {
		d.kill()
		d, kills = start(t, dir, opts{args: flags}), kills+1
	}
	for i := range requests {
		files := in.phase(i)
		half := rng.IntN(len(files) + 1)
		for k, f := range files {
			if k == half && rng.IntN(4) == 0 { // between the files of one phase: mid-ingest
				restart()
			}
			appendFile(t, filepath.Join(dir, f.path), f.data)
		}
		probe := fmt.Sprintf("p-%03d", i)
		writeRequest(t, dir, probe, `{"size": 3}`)
		if rng.IntN(4) == 0 { // around an answer: before, during or after its commit
			time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond)
			restart()
		}
		waitBatch(t, d, probe)
		db := snapshotOf(t, dir, copies, i)
		id := fmt.Sprintf("q-%03d", i)
		size, group := 4+rng.IntN(12), 1+rng.IntN(4)
		writeRequest(t, dir, id, fmt.Sprintf(`{"size": %d, "group_size": %d}`, size, group))
		got := waitBatch(t, d, id)
		want := batchOn(t, dir, db, id, size, group, flags...)
		if !bytes.Equal(withoutTime(t, got), withoutTime(t, want)) {
			t.Fatalf("request %s (%d kills so far): the daemon answered\n%s\nthe database alone gives\n%s", id, kills, got, want)
		}
	}
	if kills == 0 {
		t.Fatal("no kill in this run: the test did not try what it is about")
	}
	t.Logf("%d requests, %d kills, %d rollouts, %d catalogue rows", requests, kills, in.rollouts, in.rows)
}

// snapshotOf asks the daemon serving dir for a consistent copy of its database and moves it
// into copies.
func snapshotOf(t *testing.T, dir, copies string, i int) string {
	t.Helper()
	folder := filepath.Join(dir, "snapshots")
	name := fmt.Sprintf("model-%03d", i)
	must(t, os.MkdirAll(folder, 0o755))
	tmp := filepath.Join(folder, "."+name+".tmp")
	must(t, os.WriteFile(tmp, []byte("{}\n"), 0o644))
	must(t, os.Rename(tmp, filepath.Join(folder, name+".want")))
	path := filepath.Join(folder, name+".db")
	waitUntil(t, "snapshot "+name, func() bool { _, err := os.Stat(path); return err == nil })
	out := filepath.Join(copies, name+".db")
	must(t, os.Rename(path, out))
	return out
}

// batchOn runs `envsched batch` on dir with database db and returns its batch.
func batchOn(t *testing.T, dir, db, id string, size, group int, flags ...string) []byte {
	t.Helper()
	cmd := execCommand(append([]string{"batch", "--dir", dir, "--db", db, "--id", id, "--json",
		"--size", fmt.Sprint(size), "--group-size", fmt.Sprint(group)}, flags...))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("envsched batch: %v\n%s", err, stderr.String())
	}
	return out
}

// inputs makes the files of each phase: rollouts of catalogue tasks and of tasks the
// catalogue does not describe (yet), with and without steps, and now and then a catalogue file
// of new tasks and new wordings of known ones.
type inputs struct {
	rng            *rand.Rand
	rollouts, rows int
	described      []string // "env/task" of catalogue rows written here
}

type inputFile struct {
	path string // relative to DIR
	data string
}

var modelWords = []string{"refund", "order", "flight", "hotel", "cancel", "status", "weather",
	"search", "rename", "merge", "invoice", "customer"}

func (in *inputs) phase(i int) []inputFile {
	var out []inputFile
	if in.rng.IntN(3) == 0 {
		out = append(out, inputFile{fmt.Sprintf("catalog/part-%03d.jsonl", i), in.catalogue()})
	}
	for range 1 + in.rng.IntN(3) {
		out = append(out, inputFile{fmt.Sprintf("rollouts/worker-%d.jsonl", in.rng.IntN(3)), in.lines(i)})
	}
	return out
}

func (in *inputs) catalogue() string {
	var b strings.Builder
	for range 1 + in.rng.IntN(6) {
		env, task := fmt.Sprintf("env-%d", in.rng.IntN(5)), fmt.Sprintf("new-%d", in.rng.IntN(60))
		if len(in.described) > 0 && in.rng.IntN(3) == 0 { // a new wording
			env, task, _ = strings.Cut(in.described[in.rng.IntN(len(in.described))], "/")
		}
		var words []string
		for range 2 + in.rng.IntN(4) {
			words = append(words, modelWords[in.rng.IntN(len(modelWords))])
		}
		fmt.Fprintf(&b, `{"env":%q,"task_id":%q,"text":%q,"tools":[%q]}`+"\n", env, task,
			strings.Join(words, " "), modelWords[in.rng.IntN(4)])
		in.described = append(in.described, env+"/"+task)
		in.rows++
	}
	return b.String()
}

func (in *inputs) lines(i int) string {
	var b strings.Builder
	for range 1 + in.rng.IntN(40) {
		env, task := fmt.Sprintf("env-%d", in.rng.IntN(5)), fmt.Sprintf("task-%d", in.rng.IntN(97))
		switch in.rng.IntN(4) {
		case 0:
			task = fmt.Sprintf("new-%d", in.rng.IntN(60))
		case 1:
			task = fmt.Sprintf("bare-%d", in.rng.IntN(30)) // never described
		}
		step := ""
		if in.rng.IntN(4) != 0 {
			step = fmt.Sprintf(`,"step":%d`, i+in.rng.IntN(2))
		}
		fmt.Fprintf(&b, `{"env":%q,"task_id":%q,"reward":%d,"group_id":"g%d-%d"%s,"rollout_id":"m%07d"}`+"\n",
			env, task, in.rng.IntN(2), i, in.rng.IntN(8), step, in.rollouts)
		in.rollouts++
	}
	return b.String()
}

// withoutTime is a batch file with its created_at field removed, the fields in their order.
func withoutTime(t *testing.T, batch []byte) []byte {
	t.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(batch, &fields); err != nil {
		t.Fatalf("batch: %v\n%s", err, batch)
	}
	if _, ok := fields["created_at"]; !ok {
		t.Fatalf("batch without created_at: %s", batch)
	}
	delete(fields, "created_at")
	out, err := json.Marshal(fields) // map keys sorted: the same for both
	must(t, err)
	return out
}
