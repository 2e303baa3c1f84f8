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

// TestPickReasonNamesEachGradedMeasure (fix11, siblings of review11's graded-reason finding):
// under every --exploit-graded measure a graded task chosen for its exploitation value says that
// measure's words, and a 0/1 task keeps "high predicted variance" / "best predicted variance
// left" whatever --exploit is (the reasons of 0/1 answers are part of the file contract).
func TestPickReasonNamesEachGradedMeasure(t *testing.T) {
	dir := t.TempDir()
	var cat, roll bytes.Buffer
	for i := range 12 {
		fmt.Fprintf(&cat, `{"env": "g", "task_id": %d, "text": "graded task %d about topic %d"}`+"\n", i, i, i%4)
		fmt.Fprintf(&cat, `{"env": "b", "task_id": %d, "text": "binary task %d about subject %d"}`+"\n", i, i, i%4)
		for step := 1; step <= 3; step++ {
			for k := range 8 {
				r := 0.45 + 0.1*float64(k%2) // never all-equal, a small spread
				if i%2 == 0 {
					r = 0.1 + 0.8*float64(k%2) // a wide spread
				}
				fmt.Fprintf(&roll, `{"env": "g", "task_id": %d, "reward": %g, "step": %d}`+"\n", i, r, step)
				fmt.Fprintf(&roll, `{"env": "b", "task_id": %d, "reward": %d, "step": %d}`+"\n", i, k%2, step)
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
	binary := []string{"high predicted variance", "best predicted variance left"}
	for measure, want := range map[string][]string{
		"variance":    binary,
		"informative": {"likely informative group", "best informative chance left"},
		"matched":     {"likely informative group", "best informative chance left"},
		"spread":      {"high predicted spread", "best predicted spread left"},
		"lasting":     {"likely to stay informative", "best lasting chance left"},
	} {
		for _, exploit := range []string{"variance", "informative"} {
			code, out, msg := runApp("batch", "--dir", dir, "--size", "12", "--json", "--random-share", "0",
				"--exploit-graded", measure, "--exploit", exploit, "--id", "r-"+measure+"-"+exploit, "--db",
				filepath.Join(t.TempDir(), "db"))
			if code != exitOK {
				t.Fatalf("batch --exploit-graded %s: exit %d: %s", measure, code, msg)
			}
			var b struct {
				Tasks []struct {
					Env    string `json:"env"`
					Reason string `json:"reason"`
				} `json:"tasks"`
			}
			if err := json.Unmarshal([]byte(out), &b); err != nil {
				t.Fatal(err)
			}
			seen := map[string]int{}
			for _, task := range b.Tasks {
				w := binary
				if task.Env == "g" {
					w = want
				}
				if strings.Contains(task.Reason, "predicted") || strings.Contains(task.Reason, "likely") ||
					strings.Contains(task.Reason, "left") {
					seen[task.Env]++
					if task.Reason != w[0] && task.Reason != w[1] {
						t.Errorf("--exploit %s --exploit-graded %s: a task of %s has reason %q; want one of %q",
							exploit, measure, task.Env, task.Reason, w)
					}
				}
			}
			if seen["g"] == 0 || seen["b"] == 0 {
				t.Errorf("--exploit %s --exploit-graded %s: exploitation picks per environment %v; want some of each",
					exploit, measure, seen)
			}
		}
	}
}
