// Package benchdata writes the rollout files of the ingestion benchmarks: compact lines (about
// 110 bytes: env, task, reward, step, group, rollout id) and verl-like lines (about 4.5 KB of
// prompt and response text, as verl's rollout_data_dir dumps with env and task added).
//
// The files look like a trainer's: steps in order, each step a batch of tasks from several
// environments, each task a group of rollouts with the same group key, rollout ids random.
package benchdata

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// Shape is one kind of line.
type Shape string

// The shapes of the benchmark.
const (
	Compact Shape = "compact"
	Verl    Shape = "verl"
)

// Spec says what to write.
type Spec struct {
	Shape Shape
	Lines int // total lines
	Files int // files they are spread over (one per trainer worker); at least 1
	Envs  int // environments (default 8)
	Tasks int // tasks per environment (default 2500)
	Group int // rollouts per group (default 8)
	Batch int // tasks per step (default 256)
	Seed  uint64
}

func (s Spec) withDefaults() Spec {
	if s.Files < 1 {
		s.Files = 1
	}
	if s.Envs < 1 {
		s.Envs = 8
	}
	if s.Tasks < 1 {
		s.Tasks = 2500
	}
	if s.Group < 1 {
		s.Group = 8
	}
	if s.Batch < 1 {
		s.Batch = 256
	}
	return s
}

var envNames = []string{"bfcl-multi_turn_base", "tau2-retail", "tau2-airline", "ace-normal_preference",
	"bfcl-live_multiple", "tau-retail", "tau2-telecom", "bfcl-simple"}

// Write writes the files of s under dir/rollouts and returns their total size in bytes.
func Write(dir string, s Spec) (int64, error) {
	s = s.withDefaults()
	if err := os.MkdirAll(filepath.Join(dir, "rollouts"), 0o755); err != nil {
		return 0, err
	}
	ws := make([]*bufio.Writer, s.Files)
	fs := make([]*os.File, s.Files)
	for i := range ws {
		f, err := os.Create(filepath.Join(dir, "rollouts", fmt.Sprintf("worker-%02d.jsonl", i)))
		if err != nil {
			return 0, err
		}
		fs[i], ws[i] = f, bufio.NewWriterSize(f, 1<<20)
	}
	n, err := write(ws, s)
	for i, f := range fs {
		if ferr := ws[i].Flush(); err == nil {
			err = ferr
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	return n, err
}

func write(ws []*bufio.Writer, s Spec) (int64, error) {
	r := rand.New(rand.NewPCG(s.Seed, 17))
	g := &gen{r: r, s: s}
	var total int64
	for line := 0; line < s.Lines; {
		step := line/(s.Batch*s.Group) + 1
		env := r.IntN(min(s.Envs, len(envNames)))
		task := r.IntN(s.Tasks)
		w := ws[(line/s.Group)%len(ws)]
		for k := 0; k < s.Group && line < s.Lines; k++ {
			b := g.line(env, task, step)
			n, err := w.Write(b)
			total += int64(n)
			if err != nil {
				return total, err
			}
			line++
		}
	}
	return total, nil
}

type gen struct {
	r   *rand.Rand
	s   Spec
	buf []byte
}

func (g *gen) line(env, task, step int) []byte {
	reward := g.r.IntN(2)
	id := fmt.Sprintf("%016x", g.r.Uint64())
	if g.s.Shape == Compact {
		g.buf = fmt.Appendf(g.buf[:0], `{"env":%q,"task":"task-%05d","reward":%d,"step":%d,"group_id":"g-%d-%05d","rollout_id":"%s"}`+"\n",
			envNames[env], task, reward, step, step, task, id)
		return g.buf
	}
	m := map[string]any{
		"input":       "system\nYou are a helpful agent.\nuser\n" + g.text(2600),
		"output":      g.text(1500),
		"gts":         g.text(60),
		"score":       float64(reward),
		"step":        step,
		"data_source": envNames[env],
		"task_id":     fmt.Sprintf("task-%05d", task),
		"uid":         fmt.Sprintf("%d-%05d", step, task), // one uid per prompt: the group
		"rollout_id":  id,
	}
	b, _ := json.Marshal(m)
	g.buf = append(append(g.buf[:0], b...), '\n')
	return g.buf
}

var words = strings.Fields(`the user asked for a refund of order #W2378156 because the item arrived
	damaged; please call get_order_details with {"order_id": "#W2378156"} then check the
	payment method and confirm — café naïve 東京 résumé — before calling return_delivered_order_items
	<tool_call> </tool_call> assistant: I will now look up the order. Tool result: {"status": "delivered"}`)

func (g *gen) text(size int) string {
	var b strings.Builder
	for b.Len() < size {
		b.WriteString(words[g.r.IntN(len(words))])
		if g.r.IntN(12) == 0 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}
