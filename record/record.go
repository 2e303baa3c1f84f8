// Package record turns catalogue rows and rollout lines of the exchange protocol into records.
//
// It knows every key alias of PROTOCOL.md and nothing about files, offsets or storage: input is
// one line (or one decoded row), output is a Task or a Rollout, or a *BadLineError that says why
// the line must be quarantined.
package record

import "fmt"

// MaxLine is the longest line, newline included, that is ever parsed. Longer lines are
// quarantined by the reader without being held in memory whole.
const MaxLine = 16 << 20

// Task is one catalogue row: the pair (Env, Task) and what describes it.
type Task struct {
	Env       string
	Task      string
	Text      string    // joined text of the task; may be empty
	Tools     []string  // tool names; may be nil
	Tags      []string  // tags; may be nil
	Embedding []float32 // a given embedding; nil when absent
}

// Rollout is one rollout result. Reward is as read (finite, not yet clipped).
type Rollout struct {
	Env       string
	Task      string
	Reward    float64
	Step      int64 // meaningful only when HasStep
	HasStep   bool
	Group     string // group key ("" when the line names none)
	RequestID string // request_id of the batch it answers; "" when absent
	RolloutID string // rollout_id; "" when absent
}

// BadLineError says why a line cannot become a record. The reader quarantines such lines and
// goes on; any other error stops it.
type BadLineError struct {
	Reason string // a few words, stable for a kind of fault ("not a JSON object", "missing reward")
}

func (e *BadLineError) Error() string { return fmt.Sprintf("bad line: %s", e.Reason) }
