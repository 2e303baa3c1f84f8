package export

import (
	"strings"

	"github.com/envsched/envsched/storage"
)

// rolloutLine is one rollout as a line of the exchange protocol, with what storage adds.
type rolloutLine struct {
	Env       string  `json:"env"`
	TaskID    string  `json:"task_id"`
	Reward    float64 `json:"reward"`
	Step      *int64  `json:"step,omitempty"`
	GroupID   string  `json:"group_id,omitempty"`
	RequestID string  `json:"request_id,omitempty"`
	RolloutID string  `json:"rollout_id,omitempty"`
	Round     int64   `json:"round"`   // the round it was counted at (its step when it has one)
	Seq       uint64  `json:"seq"`     // position among its task's rollouts
	Clipped   bool    `json:"clipped"` // the reward as read was outside the range
	File      string  `json:"file,omitempty"`
}

var rolloutHeader = []string{"env", "task_id", "seq", "reward", "clipped", "round", "step", "group_id",
	"request_id", "rollout_id", "file"}

func writeRollouts(out *sink, r *storage.Reader) error {
	files, err := filePaths(r)
	if err != nil {
		return err
	}
	return r.Rollouts(func(sr *storage.StoredRollout) error {
		if out.format == CSV {
			return out.row(rolloutHeader, rolloutRow(sr, files))
		}
		return out.json(newRolloutLine(sr, files))
	})
}

func newRolloutLine(sr *storage.StoredRollout, files map[uint64]string) rolloutLine {
	l := rolloutLine{Env: sr.Env, TaskID: sr.Task, Reward: sr.Reward, GroupID: sr.Group,
		RequestID: sr.RequestID, RolloutID: sr.RolloutID, Round: sr.Round, Seq: sr.Seq,
		Clipped: sr.Clipped, File: files[sr.File]}
	if sr.HasStep {
		step := sr.Step
		l.Step = &step
	}
	return l
}

func rolloutRow(sr *storage.StoredRollout, files map[uint64]string) []string {
	step := ""
	if sr.HasStep {
		step = itoa(sr.Step)
	}
	return []string{sr.Env, sr.Task, itoa(int64(sr.Seq)), ftoa(sr.Reward), btoa(sr.Clipped), itoa(sr.Round),
		step, sr.Group, sr.RequestID, sr.RolloutID, files[sr.File]}
}

// filePaths maps file IDs to their paths in the exchange directory.
func filePaths(r *storage.Reader) (map[uint64]string, error) {
	states, err := r.Files()
	if err != nil {
		return nil, err
	}
	m := make(map[uint64]string, len(states))
	for _, f := range states {
		m[f.ID] = f.Path
	}
	return m, nil
}

func btoa(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// taskLine is one task as a catalogue row of the exchange protocol, with its statistics. No
// key is an alias of another catalogue field (no "id", "index", "tag", "domain").
type taskLine struct {
	Env        string    `json:"env"`
	TaskID     string    `json:"task_id"`
	Text       string    `json:"text,omitempty"`
	Tools      []string  `json:"tools,omitempty"`
	Tags       []string  `json:"tags,omitempty"`
	Embedding  []float32 `json:"embedding,omitempty"`
	InCatalog  bool      `json:"in_catalog"`
	Seq        uint64    `json:"seq"`
	Rollouts   int64     `json:"rollouts"`
	MeanReward float64   `json:"mean_reward"` // in the configured reward range; 0 without rollouts
	Groups     int64     `json:"groups"`
	Degenerate int64     `json:"degenerate_groups"`
	Chosen     int64     `json:"chosen"`
	LastChosen int64     `json:"last_chosen"`
	LastStep   int64     `json:"last_step"`
}

var taskHeader = []string{"env", "task_id", "in_catalog", "seq", "rollouts", "mean_reward", "groups",
	"degenerate_groups", "chosen", "last_chosen", "last_step", "text", "tools", "tags", "embedding_dim"}

func writeTasks(out *sink, r *storage.Reader, scale storage.Range) error {
	return r.Tasks(true, func(ti storage.TaskInfo) error {
		l := newTaskLine(ti, scale)
		if out.format == JSONL {
			return out.json(l)
		}
		return out.row(taskHeader, []string{l.Env, l.TaskID, btoa(l.InCatalog), itoa(int64(l.Seq)),
			itoa(l.Rollouts), ftoa(l.MeanReward), itoa(l.Groups), itoa(l.Degenerate), itoa(l.Chosen),
			itoa(l.LastChosen), itoa(l.LastStep), l.Text, strings.Join(l.Tools, ";"),
			strings.Join(l.Tags, ";"), itoa(int64(len(l.Embedding)))})
	})
}

func newTaskLine(ti storage.TaskInfo, scale storage.Range) taskLine {
	s := ti.Stats
	l := taskLine{Env: ti.Env, TaskID: ti.Task.Task, Text: ti.Text, Tools: ti.Tools, Tags: ti.Tags,
		Embedding: ti.Embedding, InCatalog: ti.InCatalog, Seq: ti.Seq, Rollouts: s.Rollouts,
		Groups: s.Groups, Degenerate: s.Degenerate, Chosen: s.Chosen, LastChosen: s.LastChosen,
		LastStep: s.LastStep}
	if s.Rollouts > 0 {
		l.MeanReward = scale.Scale(s.Mean())
	}
	return l
}

var batchHeader = []string{"id", "step", "created_at", "policy", "size", "group_size", "rollouts_seen",
	"rank", "env", "task_id", "score", "predicted_mean", "predicted_variance", "p_degenerate",
	"exploit", "coverage", "penalty", "reason"}

// writeBatches writes the stored answers in request ID order.
func writeBatches(out *sink, r *storage.Reader) error {
	return r.Answers(func(id string, data []byte) error {
		if out.format == JSONL {
			return out.raw(data)
		}
		a, err := DecodeAnswer(id, data)
		if err != nil {
			return err
		}
		for _, t := range a.Tasks {
			if err := out.row(batchHeader, batchRow(a, t)); err != nil {
				return err
			}
		}
		return nil
	})
}

func batchRow(a Answer, t AnswerTask) []string {
	return []string{a.ID, itoa(a.Step), a.CreatedAt, a.Policy, itoa(int64(a.Size)), itoa(int64(a.GroupSize)),
		itoa(a.RolloutsSeen), itoa(int64(t.Rank)), t.Env, t.TaskID, ftoa(t.Score), ftoa(t.PredictedMean),
		ftoa(t.PredictedVariance), ftoa(t.PDegenerate), ftoa(t.Exploit), ftoa(t.Coverage), ftoa(t.Penalty),
		t.Reason}
}

// quarantineLine is one quarantined line.
type quarantineLine struct {
	Seq    uint64 `json:"seq"`
	File   string `json:"file"`
	Offset int64  `json:"offset"`
	Reason string `json:"reason"`
	Head   string `json:"head"` // the first bytes of the line, as text
}

var quarantineHeader = []string{"seq", "file", "offset", "reason", "head"}

func writeQuarantine(out *sink, r *storage.Reader) error {
	return r.Quarantine(func(q storage.QuarantineEntry) error {
		l := quarantineLine{Seq: q.Seq, File: q.Path, Offset: q.Offset, Reason: q.Reason,
			Head: strings.ToValidUTF8(string(q.Head), "\uFFFD")}
		if out.format == JSONL {
			return out.json(l)
		}
		return out.row(quarantineHeader, []string{itoa(int64(l.Seq)), l.File, itoa(l.Offset), l.Reason, l.Head})
	})
}
