package schedule

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/envsched/envsched/batcher"
	"github.com/envsched/envsched/ledger"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/storage"
)

// Answer is the batch file of PROTOCOL.md, field by field in its order. Seed and Eligible are
// extra fields: the seed every random choice used, and how many tasks could be chosen.
type Answer struct {
	ID           string         `json:"id"`
	Policy       string         `json:"policy"`
	Step         int64          `json:"step"`
	CreatedAt    string         `json:"created_at"`
	Size         int            `json:"size"`
	GroupSize    int            `json:"group_size"`
	RolloutsSeen int64          `json:"rollouts_seen"`
	Envs         map[string]int `json:"envs"`
	Tasks        []Task         `json:"tasks"`
	Seed         uint64         `json:"seed"`
	Eligible     int            `json:"eligible"`
}

// Task is one chosen task of an Answer. Rewards are normalised into [0, 1] (the configured
// reward range mapped onto it). Score = Exploit + Coverage − Penalty (see package batcher).
type Task struct {
	Env               string  `json:"env"`
	TaskID            string  `json:"task_id"`
	Rank              int     `json:"rank"`
	Score             float64 `json:"score"`
	PredictedMean     float64 `json:"predicted_mean"`
	PredictedVariance float64 `json:"predicted_variance"`
	PDegenerate       float64 `json:"p_degenerate"`
	Exploit           float64 `json:"exploit"`
	Coverage          float64 `json:"coverage"`
	Penalty           float64 `json:"penalty"`
	Reason            string  `json:"reason"`
}

// newAnswer is the answer of batch b; answered[r] is the prediction pick r is answered with.
func newAnswer(id string, step int64, now time.Time, req batcher.Request, st *state, answered []propagate.Prediction, b batcher.Batch) *Answer {
	ans := &Answer{
		ID: id, Policy: Policy, Step: step, CreatedAt: now.UTC().Format(time.RFC3339),
		Size: req.Size, GroupSize: req.GroupSize, RolloutsSeen: st.counters.Rollouts,
		Envs: map[string]int{}, Tasks: make([]Task, len(b.Picks)), Seed: req.Seed, Eligible: b.Eligible,
	}
	for r, pk := range b.Picks {
		nd, pr := st.g.Nodes[pk.Node], answered[r]
		env := st.g.Envs[nd.Env]
		ans.Envs[env]++
		ans.Tasks[r] = Task{
			Env: env, TaskID: nd.Task, Rank: r + 1, Score: num(pk.Score),
			PredictedMean: num(pr.Mean), PredictedVariance: num(pr.Var), PDegenerate: num(pr.PDegenerate(req.GroupSize)),
			Exploit: num(pk.Exploit), Coverage: num(pk.Coverage), Penalty: num(pk.Penalty), Reason: pk.Reason,
		}
	}
	return ans
}

// predictions are the answer's predictions as written, for the calibration ledger.
func (a *Answer) predictions() []ledger.Prediction {
	out := make([]ledger.Prediction, len(a.Tasks))
	for i, t := range a.Tasks {
		out[i] = ledger.Prediction{Env: t.Env, Task: t.TaskID, Rank: t.Rank, PDegenerate: t.PDegenerate,
			Mean: t.PredictedMean, Random: t.Reason == batcher.ReasonRandom}
	}
	return out
}

// num rounds to 6 decimals for a readable file, and makes a non-finite number 0 so that the
// file is always valid JSON (no NaN or Inf ever reaches it). A number too large to have
// decimals (beyond 1e15) is kept as it is: rounding it would overflow to Inf (a score of 1e308
// from a --coverage-weight of 1e308 made the answer unencodable, which stops the daemon).
func num(x float64) float64 {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return 0
	case math.Abs(x) > 1e15:
		return x
	}
	return math.Round(x*1e6) / 1e6
}

// lastStep is the step of the last answered request: read from its stored answer, or the
// database's round when that answer cannot be read.
func lastStep(r *storage.Reader, c storage.Counters) (int64, error) {
	if c.LastRequest == "" {
		return 0, nil
	}
	data, err := r.Answer(c.LastRequest)
	if errors.Is(err, storage.ErrNotFound) {
		return c.Round, nil
	}
	if err != nil {
		return 0, err
	}
	if step, ok := stepOf(data); ok {
		return step, nil
	}
	return c.Round, nil
}

// stepOf reads the top-level "step" of a stored answer (see topInt).
func stepOf(data []byte) (int64, bool) { return topInt(data, "step") }

// topInt reads the integer top-level field key of a stored answer without decoding the rest:
// "step" and "group_size" come before "tasks", which may hold 100,000 entries.
func topInt(data []byte, key string) (int64, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, false
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return 0, false
		}
		if k == key {
			var n int64
			return n, dec.Decode(&n) == nil
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return 0, false
		}
	}
	return 0, false
}

// LastGroupSize is the group_size of the last request answered in db; false when none was.
func LastGroupSize(db *storage.DB) (int, bool, error) {
	var g int64
	var ok bool
	err := db.View(func(r *storage.Reader) error {
		c, err := r.Counters()
		if err != nil || c.LastRequest == "" {
			return err
		}
		data, err := r.Answer(c.LastRequest)
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		g, ok = topInt(data, "group_size")
		return nil
	})
	return int(g), ok && g > 0, err
}

// LastStep is the step of the last request answered in db, 0 when none: a request without a
// step is for LastStep + 1.
func LastStep(db *storage.DB) (int64, error) {
	var step int64
	err := db.View(func(r *storage.Reader) error {
		c, err := r.Counters()
		if err == nil {
			step, err = lastStep(r, c)
		}
		return err
	})
	return step, err
}

// RetiredIn counts the tasks of a stored answer (a batch file's bytes) that are retired now,
// listed by no catalogue file, and how many tasks it holds. A used request ID gets its stored
// answer whatever the catalogue says now; when the answer's tasks are retired, the ID was most
// likely answered for an earlier run whose database this run inherited, and the daemon says so.
func (s *Scheduler) RetiredIn(answer []byte) (retired, total int, err error) {
	var a struct {
		Tasks []struct {
			Env    string `json:"env"`
			TaskID string `json:"task_id"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(answer, &a); err != nil {
		return 0, 0, err
	}
	err = s.db.View(func(r *storage.Reader) error {
		for _, t := range a.Tasks {
			if r.IsRetired(storage.TaskKey{Env: t.Env, Task: t.TaskID}) {
				retired++
			}
		}
		return nil
	})
	return retired, len(a.Tasks), err
}

// UnknownEnvs returns, of names (a request's exclude_envs), those that are no environment the
// database knows, each with the known environment it is likely a typo of ("" when none is
// near: batcher.NearEnv). Such a name excludes nothing (PROTOCOL.md, section 5), which is what a
// trainer means when it excludes an environment not in its catalogue yet, and not what it means
// when it misspelt a held-out one.
func (s *Scheduler) UnknownEnvs(names []string) (map[string]string, error) {
	var out map[string]string
	err := s.db.View(func(r *storage.Reader) error {
		var known []string
		for _, n := range names {
			if _, err := r.Env(n); err == nil {
				continue
			} else if !errors.Is(err, storage.ErrNotFound) {
				return err
			}
			if known == nil {
				envs, err := r.Envs()
				if err != nil {
					return err
				}
				known = make([]string, 0, len(envs))
				for e := range envs {
					known = append(known, e)
				}
				slices.Sort(known)
			}
			if out == nil {
				out = map[string]string{}
			}
			out[n] = batcher.NearEnv(n, known)
		}
		return nil
	})
	return out, err
}
