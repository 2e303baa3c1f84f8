package python_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/envsched/envsched/ingest"
	"github.com/envsched/envsched/internal/testbin"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// The shapes of verl's rollout dump (trainer.rollout_data_dir), each from verl's source:
//
//   - legacy trainer, verl v0.5.0: verl/trainer/ppo/ray_trainer.py, _dump_generations writes
//     {"input", "output", "score", "step"} then every reward extra key, json.dumps per line,
//     into {global_steps}.jsonl opened with mode "w";
//   - legacy trainer, v0.6.0, v0.6.1, v0.7.0 and main at b178a3c (2026-01-29): the same with
//     "gts" after "output";
//   - V1 trainer (verl v0.9.0 on by default, trainer.use_v1): verl/trainer/ppo/v1/trainer_base.py,
//     _log_rollout_data writes input, output, gts, score, step and uid, and no reward extra key.
//     This shape is as issue 15 quotes it from v0.9.0: the stored mirror of verl used here ends at
//     main of 2026-01-29, before the V1 trainer, so it is not read from the source itself.
//
// With a dict score, verl's reward manager (verl/workers/reward_manager/naive.py, same tags)
// puts every key of the dict into the reward extra info, "score" included: that key lands on
// the position of the base "score" (a dict keeps the first position of a key), so the key order
// is input, output, [gts], score, step, then the wrapper's data_source, task_id, group_id.

// legacyLine is one line of a legacy dump whose reward function was envsched_verl's wrapper
// (not stamped: the sampler adapter of v0.5.0 to v0.7.1).
func legacyLine(withGts bool, prompt, env, task, group string, score float64, step int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"input": %q, "output": "The answer is 42."`, prompt)
	if withGts {
		b.WriteString(`, "gts": "42"`)
	}
	fmt.Fprintf(&b, `, "score": %v, "step": %d, "data_source": %q, "task_id": %q, "group_id": %q}`+"\n",
		score, step, env, task, group)
	return b.Bytes()
}

// v1Line is one line of the V1 trainer's dump: no env, no task.
func v1Line(prompt, uid string, session, index int, score float64, step int) []byte {
	return []byte(fmt.Sprintf(`{"input": %q, "output": "The answer is 42.", "gts": "42", "score": %v, "step": %d, "uid": "%s_%d_%d"}`+"\n",
		prompt, score, step, uid, session, index))
}

// openIngest opens a fresh database and an ingester of dir; the database is checked at the end.
func openIngest(t *testing.T, dir string) (*storage.DB, *ingest.Ingester) {
	t.Helper()
	db, err := storage.Open(filepath.Join(t.TempDir(), "envsched.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	t.Cleanup(func() { storagetest.MustCheck(t, db, dir) })
	in, err := ingest.New(db, dir, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return db, in
}

// groupsOf returns "env/task/group=sorted rewards" of every stored group, and the counters.
func groupsOf(t *testing.T, db *storage.DB, wantStep int64) ([]string, storage.Counters) {
	t.Helper()
	perGroup := map[string][]float64{}
	var c storage.Counters
	err := db.View(func(r *storage.Reader) error {
		if err := r.Rollouts(func(sr *storage.StoredRollout) error {
			if !sr.HasStep || sr.Step != wantStep {
				return fmt.Errorf("rollout %s/%s lost its step: %+v", sr.Env, sr.Task, sr)
			}
			k := sr.Env + "/" + sr.Task + "/" + sr.Group
			perGroup[k] = append(perGroup[k], sr.Reward)
			return nil
		}); err != nil {
			return err
		}
		var err error
		c, err = r.Counters()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k, v := range perGroup {
		sort.Float64s(v)
		keys = append(keys, fmt.Sprintf("%s=%v", k, v))
	}
	sort.Strings(keys)
	return keys, c
}

// TestVerlLegacyDumpLinesIngestUnchanged: the legacy trainer's dump lines, in the v0.5.0 shape
// and in the v0.6.0-and-later shape, are read unchanged; the wrapper's group_id keeps the
// samples of one task in one step together.
func TestVerlLegacyDumpLinesIngestUnchanged(t *testing.T) {
	for _, tc := range []struct {
		name    string
		withGts bool
	}{{"v0.5.0", false}, {"v0.6.0 to main", true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			dump := filepath.Join(dir, "rollouts", "verl")
			os.MkdirAll(dump, 0o755)
			var data []byte
			for _, g := range []struct {
				env, task string
				scores    []float64
			}{
				{"gsm8k", "17", []float64{1, 0, 1, 1}},
				{"math", "5", []float64{0, 0, 0, 0}},
			} {
				for _, s := range g.scores {
					data = append(data, legacyLine(tc.withGts, "Solve problem "+g.task, g.env, g.task, "tok-1", s, 3)...)
				}
			}
			os.WriteFile(filepath.Join(dump, "3.jsonl"), data, 0o644)
			db, in := openIngest(t, dir)
			if _, err := in.Scan(context.Background()); err != nil {
				t.Fatal(err)
			}
			keys, c := groupsOf(t, db, 3)
			if c.Rollouts != 8 || c.Quarantined != 0 {
				t.Fatalf("counters %+v, want 8 rollouts and nothing quarantined", c)
			}
			want := []string{"gsm8k/17/tok-1=[0 1 1 1]", "math/5/tok-1=[0 0 0 0]"}
			if fmt.Sprint(keys) != fmt.Sprint(want) {
				t.Errorf("groups:\n got %v\nwant %v", keys, want)
			}
		})
	}
}

// TestVerlV1DumpLinesNameNoTask: the V1 trainer's dump carries no env and no task, so a V1
// dump in DIR/rollouts is quarantined line by line ("missing env"). This is why, with verl's
// defaults from v0.9.0, rollouts reach envsched through the reward wrapper's own lines
// (TestVerlWrapperLines*) and the README says to keep rollout_data_dir out of DIR/rollouts.
func TestVerlV1DumpLinesNameNoTask(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "rollouts"), 0o755)
	var data []byte
	for i := 0; i < 4; i++ {
		data = append(data, v1Line("Solve problem 17", "7f3a9c", 0, i, 1, 3)...)
	}
	os.WriteFile(filepath.Join(dir, "rollouts", "3.jsonl"), data, 0o644)
	db, in := openIngest(t, dir)
	if _, err := in.Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, c := groupsOf(t, db, 3)
	if c.Rollouts != 0 || c.Quarantined != 4 {
		t.Fatalf("counters %+v, want 4 quarantined V1 lines", c)
	}
}

// flowResult is what clients/python/tests/verl_flow.py prints.
type flowResult struct {
	Attempt string `json:"attempt"`
	Reads   []int  `json:"reads"`
}

// runFlow plays verl around EnvschedDataset and the reward wrapper for two steps of 6
// prompts with 4 samples each (see verl_flow.py).
func runFlow(t *testing.T, py, dir, ckpt string, extra ...string) flowResult {
	t.Helper()
	args := append([]string{filepath.Join(repoRoot(t), "clients", "python", "tests", "verl_flow.py"), dir,
		"--steps", "2", "--batch", "6", "--group", "4", "--checkpoint", ckpt}, extra...)
	out, err := exec.Command(py, args...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("verl_flow.py: %v\n%s\n%s", err, out, stderr)
	}
	var r flowResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("verl_flow.py output %q: %v", out, err)
	}
	return r
}

// exportedRollout is one line of `envsched export --what rollouts`.
type exportedRollout struct {
	Env       string  `json:"env"`
	TaskID    string  `json:"task_id"`
	Reward    float64 `json:"reward"`
	Step      *int64  `json:"step"`
	GroupID   string  `json:"group_id"`
	RequestID string  `json:"request_id"`
	RolloutID string  `json:"rollout_id"`
}

func exportRollouts(t *testing.T, bin, dir string) []exportedRollout {
	t.Helper()
	out, code := runCmd(bin, "export", "--dir", dir, "--what", "rollouts", "--format", "jsonl")
	if code != 0 {
		t.Fatalf("envsched export: exit %d\n%s", code, out)
	}
	var rs []exportedRollout
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r exportedRollout
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		rs = append(rs, r)
	}
	return rs
}

// checkReplayedSteps checks the stored rollouts of two attempts at steps 1 and 2 (the second a
// resume with no checkpoint, so it replays both): every sample written counts once; each
// (attempt, step, slot) is a group of exactly 4; both attempts asked the same request IDs.
func checkReplayedSteps(t *testing.T, rs []exportedRollout, attempts ...string) {
	t.Helper()
	if len(rs) != 2*2*6*4 {
		t.Fatalf("%d rollouts stored, want %d (2 attempts x 2 steps x 6 prompts x 4 samples)", len(rs), 2*2*6*4)
	}
	groups := map[string]int{}
	ids := map[string]bool{}
	requests := map[string]map[string]bool{}
	for _, r := range rs {
		if r.Step == nil || (*r.Step != 1 && *r.Step != 2) {
			t.Fatalf("rollout without its step: %+v", r)
		}
		if ids[r.RolloutID] {
			t.Fatalf("rollout id %s twice", r.RolloutID)
		}
		ids[r.RolloutID] = true
		groups[r.GroupID]++
		att, _, _ := strings.Cut(r.GroupID, "/")
		if requests[att] == nil {
			requests[att] = map[string]bool{}
		}
		requests[att][r.RequestID] = true
		if want := fmt.Sprintf("verl-%06d", *r.Step); r.RequestID != want {
			t.Errorf("rollout of step %d has request_id %q, want %q", *r.Step, r.RequestID, want)
		}
	}
	if len(groups) != 2*2*6 {
		t.Errorf("%d groups, want 24 (a replayed step makes groups of its own)", len(groups))
	}
	for g, n := range groups {
		if n != 4 {
			t.Errorf("group %s has %d rollouts, want 4", g, n)
		}
	}
	for _, a := range attempts {
		if len(requests[a]) != 2 {
			t.Errorf("attempt %s: requests %v, want verl-000001 and verl-000002", a, requests[a])
		}
	}
}

// TestVerlWrapperLinesThroughDaemon: EnvschedDataset and the reward wrapper against the real
// daemon, then the same steps replayed by a resumed run: nothing depends on verl's dump.
func TestVerlWrapperLinesThroughDaemon(t *testing.T) {
	py := needPython(t)
	bin := testbin.Envsched(t)
	dir, ckpt := t.TempDir(), t.TempDir()
	writeFlowCatalog(t, dir)
	d := startDaemon(t, bin, dir)
	a := runFlow(t, py, dir, ckpt)
	b := runFlow(t, py, dir, ckpt) // no checkpoint was written: the resumed run replays steps 1 and 2
	if fmt.Sprint(a.Reads) != fmt.Sprint(b.Reads) {
		t.Errorf("the replay read other rows: %v, then %v", a.Reads, b.Reads)
	}
	s := barrierStatus(t, dir)
	if s.Rollouts != 96 || s.Quarantined != 0 || s.Duplicates != 0 {
		t.Errorf("status %+v, want 96 rollouts, nothing quarantined or duplicate", s)
	}
	d.stop(t)
	checkReplayedSteps(t, exportRollouts(t, bin, dir), a.Attempt, b.Attempt)
}

// TestVerlWrapperLinesThroughIngest: the same with `envsched ingest` after both runs (the
// requests answered by the Python stand-in), and a second ingest that finds nothing new.
func TestVerlWrapperLinesThroughIngest(t *testing.T) {
	py := needPython(t)
	bin := testbin.Envsched(t)
	dir, ckpt := t.TempDir(), t.TempDir()
	a := runFlow(t, py, dir, ckpt, "--responder")
	b := runFlow(t, py, dir, ckpt, "--responder")
	for i, want := range []string{"96 new rollouts", "0 new rollouts"} {
		out, code := runCmd(bin, "ingest", "--dir", dir)
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("envsched ingest #%d: exit %d, want %q in\n%s", i+1, code, want, out)
		}
	}
	checkReplayedSteps(t, exportRollouts(t, bin, dir), a.Attempt, b.Attempt)
}

// writeFlowCatalog writes the 60 tasks of verl_flow.py's rows (alpha, beta, gamma; 20 each).
func writeFlowCatalog(t *testing.T, dir string) {
	t.Helper()
	os.MkdirAll(filepath.Join(dir, "catalog"), 0o755)
	var b bytes.Buffer
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, `{"env": %q, "task_id": "%d", "text": "question %d"}`+"\n", []string{"alpha", "beta", "gamma"}[i%3], i/3, i)
	}
	os.WriteFile(filepath.Join(dir, "catalog", "tasks.jsonl"), b.Bytes(), 0o644)
}

// legacyStep is a legacy dump of one step as verl writes it: 16 prompts of 8 samples, every
// line starting with the same prompt text (verl puts "input" first), rewards and outputs from
// the attempt, the wrapper's group token of the attempt's process.
func legacyStep(step int, token, output string) []byte {
	var data []byte
	for p := 0; p < 16; p++ {
		for s := 0; s < 8; s++ {
			line := fmt.Sprintf(`{"input": "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nSolve problem %d<|im_end|>", "output": %q, "gts": "42", "score": %d, "step": %d, "data_source": "gsm8k", "task_id": "%d", "group_id": %q}`+"\n",
				p, output, (p+s)%2, step, p, token)
			data = append(data, line...)
		}
	}
	return data
}

// rewriteInPlace does what Python's open(path, "w") and one write do: truncate, then write,
// the same inode.
func rewriteInPlace(t *testing.T, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// checkLegacyReplay checks what a replayed legacy step must leave: the first attempt's 128
// rollouts and the replay's 128, each counted once, nothing quarantined, 16 tasks with two
// groups of 8 each (one per attempt).
func checkLegacyReplay(t *testing.T, rs []exportedRollout) {
	t.Helper()
	groups := map[string]int{}
	for _, r := range rs {
		groups[r.TaskID+"/"+r.GroupID]++
	}
	if len(rs) != 256 || len(groups) != 32 {
		t.Fatalf("%d rollouts in %d groups, want 256 in 32 (16 tasks x 2 attempts)", len(rs), len(groups))
	}
	for g, n := range groups {
		if n != 8 {
			t.Errorf("group %s has %d rollouts, want 8", g, n)
		}
	}
}

// TestVerlLegacyReplayedStepIngest: a resumed legacy run rewrites {step}.jsonl with the replayed
// step's samples (longer outputs, same first bytes); `envsched ingest` before and after.
func TestVerlLegacyReplayedStepIngest(t *testing.T) {
	bin := testbin.Envsched(t)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "rollouts", "verl"), 0o755)
	path := filepath.Join(dir, "rollouts", "verl", "5.jsonl")
	os.WriteFile(path, legacyStep(5, "attempt-1", "42"), 0o644)
	if out, code := runCmd(bin, "ingest", "--dir", dir); code != 0 || !strings.Contains(out, "128 new rollouts") {
		t.Fatalf("first ingest: exit %d\n%s", code, out)
	}
	rewriteInPlace(t, path, legacyStep(5, "attempt-2", "after a longer chain of thought, 42"))
	out, code := runCmd(bin, "ingest", "--dir", dir)
	if code != 0 || !strings.Contains(out, "128 new rollouts") || !strings.Contains(out, "0 quarantined") {
		t.Fatalf("ingest of the rewritten step: exit %d\n%s", code, out)
	}
	checkLegacyReplay(t, exportRollouts(t, bin, dir))
}

// TestVerlLegacyReplayedStepDaemon: the same while the daemon runs.
func TestVerlLegacyReplayedStepDaemon(t *testing.T) {
	bin := testbin.Envsched(t)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "rollouts", "verl"), 0o755)
	path := filepath.Join(dir, "rollouts", "verl", "5.jsonl")
	d := startDaemon(t, bin, dir)
	os.WriteFile(path, legacyStep(5, "attempt-1", "42"), 0o644)
	if s := barrierAs(t, dir, "check-1"); s.Rollouts != 128 {
		t.Fatalf("after the first attempt: %+v, want 128 rollouts", s)
	}
	rewriteInPlace(t, path, legacyStep(5, "attempt-2", "after a longer chain of thought, 42"))
	if s := barrierAs(t, dir, "check-2"); s.Rollouts != 256 || s.Quarantined != 0 {
		t.Errorf("after the replay: %+v, want 256 rollouts and nothing quarantined", s)
	}
	d.stop(t)
	checkLegacyReplay(t, exportRollouts(t, bin, dir))
}

// barrierAs asks a batch under id (a new ID: an ID answered before gets its stored answer
// without a barrier) and returns status.json once it reports that answer.
func barrierAs(t *testing.T, dir, id string) status {
	t.Helper()
	askBatch(t, dir, id, `{"size": 1}`)
	var s status
	waitFor(t, "the answer to "+id+" in status.json", func() bool {
		s = readStatus(t, dir)
		return s.LastRequest != nil && *s.LastRequest == id
	})
	return s
}
