package record

import "testing"

// TestRolloutLikeWithAModelOutput (review16): RolloutLike takes a line whose reward is a `score`,
// that has a `prompt` (or `text`, `question`, ...) and none of group_id, uid, group_index, step,
// global_step, request_id, rollout_id for a catalogue row. A rollout dump written by a trainer
// of its own (TRL's prompt/completion pairs with a score, a script copying verl's
// input/output/score without its step) has a prompt and a score, and also the model's output:
// a catalogue row never has one. Such a rollout file, named in both catalog/ and rollouts/, was a
// rollout file before hostile16 (ParseRollout) and is now read as a catalogue: none of its
// rollouts count.
func TestRolloutLikeWithAModelOutput(t *testing.T) {
	for _, line := range []string{
		`{"env":"e","task_id":"1","prompt":"What is 2+2?","completion":"4","score":1}`,
		`{"env":"e","task_id":"1","prompt":"What is 2+2?","response":"4","score":1}`,
		`{"data_source":"e","index":1,"question":"What is 2+2?","output":"4","score":1.0}`,
	} {
		if !RolloutLike([]byte(line)) {
			t.Errorf("RolloutLike(%s) = false; want true (it carries the model's output: a rollout)", line)
		}
	}
}
