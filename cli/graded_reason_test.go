package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGradedPickReasonSaysWhatItWasValuedBy (review11): since gradedexploit (5a52f0c) a task of
// an environment with graded rewards is valued by its chance of an informative group
// (--exploit-graded matched), not by 4 × its predicted variance, yet batcher's reason() still
// calls every pick whose exploit is at least its coverage and 0.5 "high predicted variance". A
// task whose groups always score 0.45 and 0.55 (never all-equal, within-group variance 0.0025) is
// chosen with exploit about 0.7 and reason "high predicted variance" beside its
// "predicted_variance" of 0.002: the answer contradicts itself, and README's list of reasons
// (Selection) says the reason tells why the task was chosen.
func TestGradedPickReasonSaysWhatItWasValuedBy(t *testing.T) {
	dir := t.TempDir()
	var cat, roll bytes.Buffer
	for i := range 20 {
		fmt.Fprintf(&cat, `{"env": "g", "task_id": %d, "text": "graded task %d about topic %d"}`+"\n", i, i, i%4)
		for step := 1; step <= 3; step++ {
			for k := range 8 {
				r := 0.5 // tasks 10-19: always 0.5, all-equal groups
				if i < 10 {
					r = 0.45 + 0.1*float64(k%2) // tasks 0-9: 0.45 and 0.55, never all-equal
				}
				fmt.Fprintf(&roll, `{"env": "g", "task_id": %d, "reward": %g, "step": %d, "group_id": "%d-%d"}`+"\n", i, r, step, step, i)
			}
		}
	}
	for name, data := range map[string][]byte{"catalog/c.jsonl": cat.Bytes(), "rollouts/r.jsonl": roll.Bytes()} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, msg := runApp("batch", "--dir", dir, "--size", "5", "--json")
	if code != exitOK {
		t.Fatalf("batch: exit %d: %s", code, msg)
	}
	var b struct {
		Tasks []struct {
			TaskID   string  `json:"task_id"`
			Variance float64 `json:"predicted_variance"`
			Exploit  float64 `json:"exploit"`
			Reason   string  `json:"reason"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatal(err)
	}
	for _, task := range b.Tasks {
		if strings.Contains(task.Reason, "variance") && 4*task.Variance < 0.5*task.Exploit {
			t.Errorf("task %s: reason %q, but its predicted_variance is %g (4 × it = %g) and it was valued %g by its chance of an informative group",
				task.TaskID, task.Reason, task.Variance, 4*task.Variance, task.Exploit)
		}
	}
}
