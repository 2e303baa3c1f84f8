package daemon

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rolloutLines returns n compact rollout lines with ids prefix-0 … prefix-(n-1).
func rolloutLines(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"env":"e%d","task_id":"t%d","reward":%d,"rollout_id":"%s-%d"}`+"\n",
			i%3, i%17, i%2, prefix, i)
	}
	return b.String()
}

func appendFile(t *testing.T, path, data string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	must(t, err)
	defer f.Close()
	_, err = f.WriteString(data)
	must(t, err)
}

func rolloutsSeen(t *testing.T, batch []byte) int64 {
	t.Helper()
	var b struct {
		RolloutsSeen int64 `json:"rollouts_seen"`
	}
	if err := json.Unmarshal(batch, &b); err != nil {
		t.Fatalf("batch %s: %v", batch, err)
	}
	return b.RolloutsSeen
}

// A request sees every complete line written before it, in both watch modes, and none of a
// line whose end was not yet written; that line counts once it is complete.
func TestBarrierTakesWhatIsComplete(t *testing.T) {
	for _, m := range watchModes {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			r := serveTest(t, testConfig(dir, m.poll))
			file := filepath.Join(dir, "rollouts", "run", "w0.jsonl")
			lines := rolloutLines("a", 500)
			last := `{"env":"e9","task_id":"t9","reward":1,"rollout_id":"last"}` + "\n"
			appendFile(t, file, lines+last[:20])
			writeRequest(t, dir, "s1.json", `{}`)
			if got := rolloutsSeen(t, r.batch("s1")); got != 500 {
				t.Errorf("rollouts_seen %d; want the 500 complete lines\n%s", got, r.log.String())
			}
			appendFile(t, file, last[20:])
			writeRequest(t, dir, "s2.json", `{}`)
			if got := rolloutsSeen(t, r.batch("s2")); got != 501 {
				t.Errorf("rollouts_seen %d after the line was finished; want 501", got)
			}
		})
	}
}

func TestFilesPresentBeforeStart(t *testing.T) {
	dir := t.TempDir()
	for i := range 5 {
		appendFile(t, filepath.Join(dir, "rollouts", fmt.Sprintf("f%d.jsonl", i)), rolloutLines(fmt.Sprint(i), 100))
	}
	writeRequest(t, dir, "first.json", `{}`)
	r := serveTest(t, testConfig(dir, false))
	if got := rolloutsSeen(t, r.batch("first")); got != 500 {
		t.Errorf("rollouts_seen %d; want the 500 lines present before start", got)
	}
}
