package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/envsched/envsched/daemon"
)

// updateGolden rewrites testdata/golden from what the commands print now. Use it only when a
// change of behaviour is meant, and say so in the commit.
var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden/*")

// goldenDir holds the expected bytes of every answer and reading command of TestGoldenRun.
const goldenDir = "testdata/golden"

// TestGoldenRun is the proof that a refactor kept behaviour byte-identical. From fixed inputs
// (a catalogue and rollouts written by goldenCatalog and goldenRollouts, no clock and no
// randomness outside fixed seeds) it drives the real commands through a short training run:
// ingest, batches asked with `batch` (each answered by rollouts of the chosen tasks, so the drift
// state and the re-chosen statistics move), a request and a bad request answered by the real
// daemon, then stats, export in every kind and format, report, and compact (after which the
// reading commands must print the same bytes again). Every output is compared byte for byte with
// a file in testdata/golden; the only thing masked is the wall-clock time an answer or report is
// stamped with.
func TestGoldenRun(t *testing.T) {
	dir := t.TempDir()
	writeGolden(t, dir, "catalog/tasks.jsonl", goldenCatalog())
	writeGolden(t, dir, "rollouts/seed.jsonl", goldenSeedRollouts())
	g := &goldenRun{t: t, dir: dir}

	g.cmd("ingest.txt", "ingest", "--dir", dir)
	g.batch("b1", "--step", "4", "--size", "12", "--group-size", "4", "--seed", "11")
	g.batch("b2", "--size", "9", "--group-size", "4", "--env", "env-a", "--env", "env-b", "--seed", "5")
	g.batch("b3", "--size", "10", "--group-size", "4", "--exclude-env", "env-c", "--exploit", "informative",
		"--gamma", "0.3", "--coverage-weight", "0.5")
	g.batch("b4", "--size", "8", "--group-size", "2", "--hops", "2", "--drift-rate", "0.2", "--rechosen-rate", "0.3",
		"--random-share", "0.25", "--seed", "3")
	g.cmd("batch-table.txt", "batch", "--dir", dir, "--size", "6", "--group-size", "4", "--seed", "2")
	g.daemon()

	g.readers()
	// compact's line gives the file's sizes, which depend on how the daemon's commits fell: not
	// compared.
	if code, _, errOut := opsApp(t, "compact", "--dir", dir); code != 0 {
		t.Fatalf("compact: exit %d: %s", code, errOut)
	}
	g.readers() // the compacted database reads the same
}

type goldenRun struct {
	t   *testing.T
	dir string
}

// cmd runs the command line in process and compares what it printed (standard output, then
// standard error) with the golden file name.
func (g *goldenRun) cmd(name string, args ...string) []byte {
	g.t.Helper()
	code, out, errOut := opsApp(g.t, args...)
	if code != 0 {
		g.t.Fatalf("envsched %v: exit %d: %s", args, code, errOut)
	}
	got := out
	if errOut != "" {
		got += "--- stderr\n" + errOut
	}
	g.compare(name, []byte(got))
	return []byte(out)
}

// batch asks for the batch id with the flags given, then writes the rollouts that answer it.
func (g *goldenRun) batch(id string, args ...string) {
	g.t.Helper()
	out := g.cmd("batch-"+id+".json", append([]string{"batch", "--dir", g.dir, "--id", id, "--json"}, args...)...)
	g.answer(out)
}

// answer writes rollouts/ID.jsonl: a group for every task of the answer, its rewards drawn from
// the task's fixed success chance with a seed of the answer's id.
func (g *goldenRun) answer(data []byte) {
	g.t.Helper()
	var a struct {
		ID        string `json:"id"`
		Step      int64  `json:"step"`
		GroupSize int    `json:"group_size"`
		Tasks     []struct {
			Env    string `json:"env"`
			TaskID string `json:"task_id"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(data, &a); err != nil {
		g.t.Fatalf("answer: %v\n%s", err, data)
	}
	rng := rand.New(rand.NewPCG(hashOf(a.ID), 1))
	var b bytes.Buffer
	for i, task := range a.Tasks {
		p := successChance(task.Env, task.TaskID)
		for r := range a.GroupSize {
			fmt.Fprintf(&b, `{"env": %q, "task_id": %q, "reward": %s, "step": %d, "group_id": "%s-%d", "request_id": %q, "rollout_id": "%s-%d-%d"}`+"\n",
				task.Env, task.TaskID, rewardText(task.Env, rng.Float64(), p), a.Step, a.ID, i, a.ID, a.ID, i, r)
		}
	}
	writeGolden(g.t, g.dir, "rollouts/"+a.ID+".jsonl", b.String())
}

// daemon serves the directory with the real daemon (polling) for one good request and one bad
// one, and compares both files it publishes.
func (g *goldenRun) daemon() {
	g.t.Helper()
	d, err := daemon.New(daemon.Config{Dir: g.dir, Poll: true, PollInterval: 10 * time.Millisecond, Version: "golden"},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		g.t.Fatal(err)
	}
	defer d.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			g.t.Errorf("daemon: %v", err)
		}
	}()
	g.request("d1", `{"size": 8, "group_size": 4, "seed": 3, "exclude_envs": ["env-b"]}`)
	good := g.published("batches/d1.json")
	g.compare("daemon-d1.json", good)
	g.answer(good)
	g.request("d2", `{"size": 1000}`)
	g.compare("daemon-d2.error.json", g.published("batches/d2.error.json"))
}

// request writes requests/ID.json as the protocol asks: whole under a temporary name, then
// renamed into place.
func (g *goldenRun) request(id, body string) {
	g.t.Helper()
	writeGolden(g.t, g.dir, "requests/"+id+".json.tmp", body)
	if err := os.Rename(filepath.Join(g.dir, "requests", id+".json.tmp"), filepath.Join(g.dir, "requests", id+".json")); err != nil {
		g.t.Fatal(err)
	}
}

// published waits for the daemon to publish the file name of the exchange directory.
func (g *goldenRun) published(name string) []byte {
	g.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		data, err := os.ReadFile(filepath.Join(g.dir, name))
		if err == nil {
			return data
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("the daemon did not publish %s", name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// readers compares what every reading command prints.
func (g *goldenRun) readers() {
	g.t.Helper()
	g.cmd("stats.txt", "stats", "--dir", g.dir)
	g.cmd("stats.json", "stats", "--dir", g.dir, "--json")
	g.cmd("stats-env-a.txt", "stats", "--dir", g.dir, "--env", "env-a")
	for _, what := range []string{"rollouts", "tasks", "batches", "quarantine"} {
		for _, format := range []string{"jsonl", "csv"} {
			g.cmd("export-"+what+"."+format, "export", "--dir", g.dir, "--what", what, "--format", format)
		}
	}
	out := filepath.Join(g.t.TempDir(), "report.html")
	code, _, errOut := opsApp(g.t, "report", "--dir", g.dir, "--out", out)
	if code != 0 {
		g.t.Fatalf("report: exit %d: %s", code, errOut)
	}
	html, err := os.ReadFile(out)
	if err != nil {
		g.t.Fatal(err)
	}
	// The report is large (plots as PNG): its digest is compared, and the file is kept under
	// the test's temporary folder for a look when they differ.
	g.compare("report.sha256", []byte(fmt.Sprintf("%x\n", sha256.Sum256(g.mask(html)))))
}

// stampRE matches the wall-clock stamps of answers (created_at) and of the report.
var stampRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)

// mask replaces the wall-clock stamps with TIME and the temporary exchange directory with DIR.
func (g *goldenRun) mask(b []byte) []byte {
	return bytes.ReplaceAll(stampRE.ReplaceAll(b, []byte("TIME")), []byte(g.dir), []byte("DIR"))
}

// compare checks got (times masked, the temporary exchange directory named DIR) against the golden file name, or writes it with
// -update-golden.
func (g *goldenRun) compare(name string, got []byte) {
	g.t.Helper()
	got = g.mask(got)
	path := filepath.Join(goldenDir, name)
	if *updateGolden {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			g.t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			g.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		g.t.Fatalf("%v (run with -update-golden to create it)", err)
	}
	if !bytes.Equal(got, want) {
		g.t.Errorf("%s differs from the golden file:\n%s", name, firstDiff(want, got))
	}
}

// firstDiff shows the first line where want and got part.
func firstDiff(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d\nwant %.300s\ngot  %.300s", i+1, a, b)
		}
	}
	return "(equal lines, different bytes)"
}

func writeGolden(t *testing.T, dir, name, data string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func hashOf(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// successChance is a task's fixed chance of success: spread over (0, 1), with some tasks
// always solved and some never, so that degenerate groups occur.
func successChance(env, task string) float64 {
	v := float64(hashOf(env+"/"+task)%1000) / 1000
	switch {
	case v < 0.15:
		return 0
	case v > 0.9:
		return 1
	}
	return v
}

// rewardText is a rollout's reward: 0 or 1 in env-a and env-b, a partial score in [0, 1] in
// env-c, and in env-d a score on 0..10 that the database clips into its range [0, 1].
func rewardText(env string, u, p float64) string {
	hit := u < p
	switch env {
	case "env-c":
		return fmt.Sprintf("%.3f", p*(0.5+u/2))
	case "env-d":
		if hit {
			return "10"
		}
		return "-1"
	}
	if hit {
		return "1"
	}
	return "0"
}

// goldenWords are the words task texts are made of: tasks of one environment share a theme,
// and near neighbours share most of their words, so the task graph has edges.
var goldenWords = [][]string{
	{"flight", "hotel", "booking", "city", "date", "cancel", "refund", "seat", "airline", "trip"},
	{"function", "array", "sort", "string", "parse", "bug", "test", "loop", "index", "return"},
	{"integral", "prime", "triangle", "angle", "sum", "series", "matrix", "root", "proof", "digit"},
	{"search", "page", "link", "table", "price", "product", "review", "click", "form", "login"},
}

// goldenCatalog is the catalogue: 4 environments of 18 tasks with text, tools and tags.
func goldenCatalog() string {
	var b bytes.Buffer
	rng := rand.New(rand.NewPCG(7, 7))
	for e, words := range goldenWords {
		env := fmt.Sprintf("env-%c", 'a'+e)
		for k := range 18 {
			text := make([]string, 0, 6)
			for i := range 6 {
				text = append(text, words[(k/3+i*rng.IntN(3))%len(words)])
			}
			fmt.Fprintf(&b, `{"env": %q, "task_id": "t%02d", "text": %q, "tools": [%q, %q], "tags": [%q]}`+"\n",
				env, k, strings.Join(text, " "), words[k%4], words[4+k%3], fmt.Sprintf("level-%d", k%3))
		}
	}
	return b.String()
}

// goldenSeedRollouts are three steps of rollouts before any request: half the tasks of each
// environment, a group of 4 each, plus two lines the database quarantines.
func goldenSeedRollouts() string {
	var b bytes.Buffer
	rng := rand.New(rand.NewPCG(3, 3))
	for step := 1; step <= 3; step++ {
		for e := range goldenWords {
			env := fmt.Sprintf("env-%c", 'a'+e)
			for k := step % 2; k < 18; k += 2 + e%2 {
				task := fmt.Sprintf("t%02d", k)
				p := successChance(env, task)
				for range 4 {
					fmt.Fprintf(&b, `{"env": %q, "task_id": %q, "reward": %s, "step": %d, "group_id": "s%d-%s-%s"}`+"\n",
						env, task, rewardText(env, rng.Float64(), p), step, step, env, task)
				}
			}
		}
	}
	b.WriteString("not json\n")
	b.WriteString(`{"env": "env-a", "task_id": "t01"}` + "\n")
	return b.String()
}

// The totals of stats are sums over the environments: they must be added in one order, or the
// last bits of a float change from one run to the next (they did, with the map's order).
func TestStatsSameBytesEachTime(t *testing.T) {
	dir := t.TempDir()
	writeGolden(t, dir, "catalog/tasks.jsonl", goldenCatalog())
	writeGolden(t, dir, "rollouts/seed.jsonl", goldenSeedRollouts())
	if code, _, errOut := opsApp(t, "ingest", "--dir", dir); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, errOut)
	}
	var first string
	for i := range 30 {
		code, out, errOut := opsApp(t, "stats", "--dir", dir, "--json")
		if code != 0 {
			t.Fatalf("stats: exit %d: %s", code, errOut)
		}
		if i == 0 {
			first = out
		} else if out != first {
			t.Fatalf("run %d printed other bytes:\n%s", i+1, firstDiff([]byte(first), []byte(out)))
		}
	}
}
