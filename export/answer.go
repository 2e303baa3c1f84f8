package export

import (
	"encoding/json"
	"fmt"

	"github.com/envsched/envsched/schedule"
)

// Answer is a stored batch answer: the batch file of PROTOCOL.md, as package schedule writes it.
type Answer = schedule.Answer

// AnswerTask is one chosen task of an answer.
type AnswerTask = schedule.Task

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
