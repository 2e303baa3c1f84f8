package record

import "testing"

// TestRolloutLike (hostile16): which first line makes a file named in both catalog/ and
// rollouts/ a rollout file. A catalogue row with a `score` beside its description was taken for
// a rollout (it parses as one), and the whole catalogue was read as rollouts.
func TestRolloutLike(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{`{"env":"e","task_id":"1","reward":1}`, true},
		{`{"env":"e","task_id":"1","score":0.5}`, true},
		{`{"data_source":"e","task_id":"3","score":true,"step":41,"input":"q","output":"a"}`, true},
		{`{"env":"e","task_id":"1","text":"t","reward":0}`, true},
		{`{"env":"e","task_id":"1","prompt":"t","score":1,"group_id":"g"}`, true},
		{`{"env":"e","task_id":"1","text":"solve","score":0.5}`, false},
		{`{"env":"e","task_id":"1","tools":["a"],"score":0.5}`, false},
		{`{"env":"e","task_id":"1","prompt":[{"role":"user","content":"x"}],"score":1}`, false},
		{`{"env":"e","task_id":"1","text":"solve"}`, false},
		{`{"env":"e","task_id":"1","reward":"high"}`, false},
		{`not json`, false},
	} {
		if got := RolloutLike([]byte(tc.line)); got != tc.want {
			t.Errorf("RolloutLike(%s) = %v; want %v", tc.line, got, tc.want)
		}
	}
}
