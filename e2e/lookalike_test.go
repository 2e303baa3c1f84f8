package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLookAlikeEnvNamesAreRefusedSayingSo: names are bytes, so a request naming an environment
// as it reads but not as the catalogue wrote it ("cafe" plus a combining accent for the
// catalogue's "café", "retail" for "Retail", a zero-width space) names no environment. In envs
// the error file said `unknown environment "café": the 3 known are "Retail", "café", "plain"`;
// in exclude_envs the name excluded nothing, and the batch held tasks of the environment the
// trainer meant to exclude. Both are refused now, the error file naming the environment meant
// and showing how the two differ.
func TestLookAlikeEnvNamesAreRefusedSayingSo(t *testing.T) {
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "catalog"), 0o755))
	var b strings.Builder
	for _, env := range []string{"caf\u00e9", "plain", "Retail"} {
		for i := range 5 {
			line, _ := json.Marshal(map[string]any{"env": env, "task_id": i, "text": "solve puzzle"})
			b.Write(append(line, '\n'))
		}
	}
	must(t, os.WriteFile(filepath.Join(dir, "catalog", "tasks.jsonl"), []byte(b.String()), 0o644))
	d := start(t, dir, opts{})
	d.waitReady()
	cases := []struct {
		id, body string
		want     []string
	}{
		{"nfd-envs", `{"size": 3, "envs": ["cafe\u0301"]}`,
			[]string{`known environment \"café\"`, `asked \"cafe\\u0301\", known \"caf\\u00e9\"`}},
		{"case-envs", `{"size": 3, "envs": ["retail"]}`, []string{`known environment \"Retail\"`}},
		{"nfd-exclude", `{"size": 10, "exclude_envs": ["cafe\u0301"]}`,
			[]string{"exclude_envs names", `known environment \"café\"`}},
		{"zw-exclude", `{"size": 10, "exclude_envs": ["absent", "plain\u200b"]}`,
			[]string{`\"plain\\u200b\"`, `known environment \"plain\"`}},
	}
	for _, tc := range cases {
		writeRequest(t, dir, tc.id, tc.body)
	}
	for _, tc := range cases {
		errPath := filepath.Join(dir, "batches", tc.id+".error.json")
		var data []byte
		waitUntil(t, tc.id, func() bool {
			if got, err := os.ReadFile(filepath.Join(dir, "batches", tc.id+".json")); err == nil {
				data = got
				return true
			}
			var err error
			data, err = os.ReadFile(errPath)
			return err == nil
		})
		for _, w := range tc.want {
			if !strings.Contains(string(data), w) {
				t.Errorf("%s: %s lacks %s", tc.id, data, w)
			}
		}
	}
	// A name in exclude_envs that reads as no environment still excludes nothing.
	writeRequest(t, dir, "absent", `{"size": 10, "exclude_envs": ["absent", "cafe"]}`)
	if got := rolloutsSeen(t, waitBatch(t, d, "absent")); got != 0 {
		t.Errorf("rollouts_seen %d", got)
	}
}
