package export

import (
	"encoding/json"
	"fmt"
)

// Answer is a stored batch answer as PROTOCOL.md defines it (fields the protocol may add later
// are ignored).
type Answer struct {
	ID           string         `json:"id"`
	Policy       string         `json:"policy"`
	Step         int64          `json:"step"`
	CreatedAt    string         `json:"created_at"`
	Size         int            `json:"size"`
	GroupSize    int            `json:"group_size"`
	RolloutsSeen int64          `json:"rollouts_seen"`
	Envs         map[string]int `json:"envs"`
	Tasks        []AnswerTask   `json:"tasks"`
}

// AnswerTask is one chosen task of an answer.
type AnswerTask struct {
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

// DecodeAnswer decodes a stored answer.
func DecodeAnswer(id string, data []byte) (Answer, error) {
	var a Answer
	if err := json.Unmarshal(data, &a); err != nil {
		return a, fmt.Errorf("stored answer %q: %w", id, err)
	}
	if a.ID == "" {
		a.ID = id
	}
	return a, nil
}
