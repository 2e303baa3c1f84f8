package catalog

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/envsched/envsched/record"
)

// TestProjectKeepsEveryAlias: dropping the columns no alias names changes no task. Each case
// sets one alias (and lower-priority ones) beside columns that are dropped.
func TestProjectKeepsEveryAlias(t *testing.T) {
	rows := []map[string]any{
		{"env": "a", "task_id": "1", "text": "t", "tools": []any{"x"}, "tags": []any{"g"}, "embedding": []any{1.0, 2.0}},
		{"data_source": "a", "task": 2, "description": "d", "reward_model": map[string]any{"ground_truth": "9"}},
		{"env_class": "a", "extra_info": map[string]any{"task_id": "3", "index": 4, "split": "train"}, "instruction": "i"},
		{"environment": "a", "index": 5, "question": "q", "ability": "math"},
		{"task_name": "a", "extra_info": map[string]any{"index": 6, "answer": "x"}, "prompt": []any{map[string]any{"role": "user", "content": "p"}}},
		{"tag": "a", "item_id": 7, "prompt": "plain"},
		{"domain": "a", "id": 8},
		{"extra_info": map[string]any{"data_source": "a", "index": 9}},
		{"env": nil, "data_source": "b", "id": "10"},
	}
	for _, row := range rows {
		full, _ := json.Marshal(row)
		kept, _ := json.Marshal(project(row))
		a, errA := record.ParseTask(full)
		b, errB := record.ParseTask(kept)
		if !reflect.DeepEqual(a, b) || (errA == nil) != (errB == nil) {
			t.Errorf("row %s: full gives %+v (%v), projected gives %+v (%v)", full, a, errA, b, errB)
		}
		if errA != nil {
			t.Errorf("row %s does not parse: %v", full, errA)
		}
	}
}
