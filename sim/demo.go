package sim

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// ErrBatchRefused is returned when envsched answers a request with an error file.
var ErrBatchRefused = errors.New("envsched refused the request")

// ExchangeConfig is how the simulated trainer drives an exchange directory.
type ExchangeConfig struct {
	Dir       string        // the exchange directory a running envsched serves
	Steps     int           // training steps
	BatchSize int           // B, asked for in every request
	GroupSize int           // G, rollouts per task
	Wait      time.Duration // longest wait for one batch file; 0 means 2 minutes
	Poll      time.Duration // how often the trainer looks for the batch file; 0 means 5 ms
	// Progress, when set, is called after every step with the step and the held-out score.
	Progress func(step int, score float64)
}

// ExchangeResult is what the trainer saw: its trace, the policy named in the batch files, and
// how many batch files it read.
type ExchangeResult struct {
	Trace   Trace
	Policy  string
	Batches int
}

// WriteCatalog writes the world's training catalogue as DIR/catalog/sim.jsonl, atomically
// (a dot-named temporary file, then a rename), one PROTOCOL.md catalogue record per line.
func WriteCatalog(dir string, w *World) (string, error) {
	folder := filepath.Join(dir, "catalog")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return "", fmt.Errorf("write catalogue: %w", err)
	}
	path := filepath.Join(folder, "sim.jsonl")
	return path, writeAtomic(path, func(bw *bufio.Writer) error {
		enc := json.NewEncoder(bw)
		for _, r := range w.Catalog() {
			row := map[string]any{"env": r.Env, "task_id": r.Task, "text": r.Text, "tools": r.Tools}
			if err := enc.Encode(row); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeAtomic writes path through ".NAME.tmp" in the same folder, fsync and rename.
func writeAtomic(path string, fill func(*bufio.Writer) error) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	bw := bufio.NewWriter(f)
	err = fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// DriveExchange trains a fresh learner of world w with the batches that the envsched serving
// cfg.Dir chooses, through the file protocol alone: each step it writes a request file,
// waits for the batch file, rolls out every task of the batch, appends the rewards as rollout
// JSONL, and updates the learner. The catalogue must already be in DIR/catalog.
func DriveExchange(ctx context.Context, cfg ExchangeConfig, w *World) (ExchangeResult, error) {
	cfg = cfg.withDefaults()
	for _, sub := range []string{"requests", "batches", "rollouts"} {
		if err := os.MkdirAll(filepath.Join(cfg.Dir, sub), 0o755); err != nil {
			return ExchangeResult{}, fmt.Errorf("exchange dir: %w", err)
		}
	}
	byKey := make(map[string]int, len(w.Tasks))
	for i, t := range w.Tasks {
		byKey[t.Record.Env+"\x00"+t.Record.Task] = i
	}
	l := NewLearner(w)
	res := ExchangeResult{Trace: newTrace("envsched", w.Seed, cfg.Steps)}
	res.Trace.Score[0], res.Trace.TaskScore[0] = l.Eval(), l.EvalTasks()
	for step := 1; step <= cfg.Steps; step++ {
		b, err := cfg.ask(ctx, step)
		if err != nil {
			return res, err
		}
		res.Policy, res.Batches = b.Policy, res.Batches+1
		groups, err := rollBatch(l, b, byKey, step, cfg.GroupSize)
		if err != nil {
			return res, err
		}
		if err := appendRollouts(cfg.Dir, w, b.ID, step, groups); err != nil {
			return res, err
		}
		l.Update(step, groups)
		res.Trace.record(step, l, groups, cfg.GroupSize)
		if cfg.Progress != nil {
			cfg.Progress(step, res.Trace.Score[step])
		}
	}
	return res, nil
}

func (c ExchangeConfig) withDefaults() ExchangeConfig {
	if c.Wait <= 0 {
		c.Wait = 2 * time.Minute
	}
	if c.Poll <= 0 {
		c.Poll = 5 * time.Millisecond
	}
	return c
}

// batchFile is the part of a batch file the trainer needs.
type batchFile struct {
	ID     string `json:"id"`
	Policy string `json:"policy"`
	Step   int    `json:"step"`
	Tasks  []struct {
		Env    string `json:"env"`
		TaskID string `json:"task_id"`
	} `json:"tasks"`
}

// ask writes the request of a step and waits for its batch file.
func (c ExchangeConfig) ask(ctx context.Context, step int) (batchFile, error) {
	id := fmt.Sprintf("step-%06d", step)
	req := filepath.Join(c.Dir, "requests", id+".json")
	body := fmt.Sprintf(`{"size": %d, "group_size": %d, "step": %d}`, c.BatchSize, c.GroupSize, step)
	if err := writeAtomic(req, func(bw *bufio.Writer) error { _, err := bw.WriteString(body + "\n"); return err }); err != nil {
		return batchFile{}, err
	}
	data, err := c.waitFor(ctx, id)
	if err != nil {
		return batchFile{}, err
	}
	var b batchFile
	if err := json.Unmarshal(data, &b); err != nil {
		return b, fmt.Errorf("batch %s: %w", id, err)
	}
	if len(b.Tasks) == 0 {
		return b, fmt.Errorf("batch %s has no tasks", id)
	}
	return b, nil
}

// waitFor polls for DIR/batches/ID.json or ID.error.json.
func (c ExchangeConfig) waitFor(ctx context.Context, id string) ([]byte, error) {
	ok := filepath.Join(c.Dir, "batches", id+".json")
	bad := filepath.Join(c.Dir, "batches", id+".error.json")
	deadline := time.Now().Add(c.Wait)
	tick := time.NewTicker(c.Poll)
	defer tick.Stop()
	for {
		if data, err := os.ReadFile(ok); err == nil {
			return data, nil
		}
		if data, err := os.ReadFile(bad); err == nil {
			return nil, fmt.Errorf("%w: %s: %s", ErrBatchRefused, id, data)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no batch file %s after %v: is envsched running on %s?", ok, c.Wait, c.Dir)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// rollBatch rolls out every task of a batch; a task that is not in the world is an error.
func rollBatch(l *Learner, b batchFile, byKey map[string]int, step, g int) ([]Group, error) {
	groups := make([]Group, 0, len(b.Tasks))
	seen := map[int]bool{}
	for _, t := range b.Tasks {
		i, ok := byKey[t.Env+"\x00"+t.TaskID]
		if !ok {
			return nil, fmt.Errorf("batch %s names %s/%s, which is not in the catalogue", b.ID, t.Env, t.TaskID)
		}
		chunk := 0
		if seen[i] {
			chunk = len(groups) // a repeat gets its own luck
		}
		seen[i] = true
		groups = append(groups, l.Rollout(i, step, chunk, g))
	}
	return groups, nil
}

// appendRollouts appends one JSON line per reward to DIR/rollouts/trainer.jsonl.
func appendRollouts(dir string, w *World, id string, step int, groups []Group) error {
	path := filepath.Join(dir, "rollouts", "trainer.jsonl")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("append rollouts: %w", err)
	}
	bw := bufio.NewWriter(f)
	for rank, g := range groups {
		writeGroup(bw, w.Tasks[g.Task].Record.Env, w.Tasks[g.Task].Record.Task, id, step, rank, g)
	}
	err = bw.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("append rollouts %s: %w", path, err)
	}
	return nil
}

func writeGroup(w io.Writer, env, task, id string, step, rank int, g Group) {
	group := id + "-" + strconv.Itoa(rank)
	for j := range g.Size {
		reward := 0
		if j < g.Successes {
			reward = 1
		}
		line, _ := json.Marshal(map[string]any{
			"env": env, "task_id": task, "reward": reward, "group_id": group, "step": step,
			"request_id": id, "rollout_id": group + "-" + strconv.Itoa(j),
		})
		w.Write(append(line, '\n'))
	}
}
