package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/envsched/envsched/ledger"
	"github.com/envsched/envsched/propagate"
)

// calibStatus is the calibration field of status.json.
type calibStatus struct {
	Calibration ledger.Summary `json:"calibration"`
}

func readCalibStatus(dir string) (ledger.Summary, error) {
	var s calibStatus
	data, err := os.ReadFile(filepath.Join(dir, "status.json"))
	if err != nil {
		return s.Calibration, err
	}
	return s.Calibration, json.Unmarshal(data, &s)
}

// batchTask is what the calibration test reads of an answer's task.
type batchTask struct {
	Env         string  `json:"env"`
	TaskID      string  `json:"task_id"`
	PDegenerate float64 `json:"p_degenerate"`
	Reason      string  `json:"reason"`
}

// TestCalibrationSurvivesKills answers a request with the real binary, then writes each group
// in two halves with a SIGKILL between them and again after the second half, resends half of
// the lines (same rollout ids) and appends rollouts of another request: after a clean restart
// status.json and `envsched stats --json` count every group once, with the answer's
// predictions.
func TestCalibrationSurvivesKills(t *testing.T) {
	dir := t.TempDir()
	d, ans := firstAnswer(t, dir)
	var first, second strings.Builder
	var predicted float64
	var degenerate int
	for i, tk := range ans.Tasks {
		rewards := []int{i % 2, i % 2, i % 2, (i / 2) % 2} // even and odd i alternate all-equal groups
		if rewards[0] == rewards[3] {
			degenerate++
		}
		predicted += tk.PDegenerate
		for j, r := range rewards {
			line := fmt.Sprintf(`{"env":%q,"task_id":%q,"reward":%d,"request_id":"s1","rollout_id":"s1-%d-%d"}`+"\n",
				tk.Env, tk.TaskID, r, i, j)
			if j < 2 {
				first.WriteString(line)
			} else {
				second.WriteString(line)
			}
		}
	}
	path := filepath.Join(dir, "rollouts", "w.jsonl")
	appendFile(t, path, first.String())
	waitUntil(t, "the first halves counted", func() bool { st, err := readStatus(dir); return err == nil && st.Rollouts == 24 })
	d.kill()
	appendFile(t, path, second.String()+first.String()+ // the first halves again: duplicates
		`{"env":"env-0","task_id":"task-0","reward":1,"request_id":"other","rollout_id":"x"}`+"\n")
	d = start(t, dir, opts{})
	waitUntil(t, "every line counted", func() bool {
		st, err := readStatus(dir)
		return err == nil && st.PID == d.cmd.Process.Pid && st.Rollouts+st.Duplicates == 73
	})
	d.kill()
	d = start(t, dir, opts{})
	d.waitReady()
	cal, err := readCalibStatus(dir)
	must(t, err)
	n := int64(len(ans.Tasks))
	want := ledger.WindowOf(ledger.Cell{Groups: n, Degenerate: int64(degenerate), PredDegenerate: predicted})
	if cal.Overall.Groups != n || cal.Overall.RealisedDegenerate != want.RealisedDegenerate ||
		math.Abs(cal.Overall.PredictedDegenerate-want.PredictedDegenerate) > 1e-4 || cal.Open != 0 {
		t.Errorf("status calibration %+v; want %d groups, %d all-equal, mean predicted %.4f, none open",
			cal, n, degenerate, want.PredictedDegenerate)
	}
	if cal.Recent.Groups != n || cal.RecentAnswers != 1 {
		t.Errorf("recent %+v over %d answers; want the one answer's %d groups", cal.Recent, cal.RecentAnswers, n)
	}
	var channels int64
	for _, w := range cal.Channels {
		channels += w.Groups
	}
	if channels != n {
		t.Errorf("channels %+v count %d groups; want %d", cal.Channels, channels, n)
	}
	var rep struct {
		Calibration ledger.Detail `json:"calibration"`
	}
	stopThenStats(t, d, dir, &rep)
	if rep.Calibration.Overall != cal.Overall {
		t.Errorf("stats --json overall %+v; status.json %+v", rep.Calibration.Overall, cal.Overall)
	}
	var binned int64
	for _, b := range rep.Calibration.Reliability {
		binned += b.Groups
	}
	if binned != n {
		t.Errorf("reliability table counts %d groups; want %d", binned, n)
	}
}

// firstAnswer starts the daemon on dir and answers request s1 (12 tasks, groups of 4).
func firstAnswer(t *testing.T, dir string) (*daemon, struct{ Tasks []batchTask }) {
	t.Helper()
	d := start(t, dir, opts{})
	d.waitReady()
	writeRequest(t, dir, "s1", `{"size": 12, "group_size": 4}`)
	var ans struct{ Tasks []batchTask }
	must(t, json.Unmarshal(waitBatch(t, d, "s1"), &ans))
	return d, ans
}

// stopThenStats stops the daemon with SIGINT and decodes `envsched stats --json` on its
// stopped database into rep.
func stopThenStats(t *testing.T, d *daemon, dir string, rep any) {
	t.Helper()
	if code := d.signal(os.Interrupt); code != 0 {
		t.Fatalf("exit %d", code)
	}
	out, err := execCommand([]string{"stats", "--dir", dir, "--json"}).Output()
	must(t, err)
	must(t, json.Unmarshal(out, rep))
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	must(t, err)
	_, err = f.WriteString(s)
	must(t, err)
	must(t, f.Close())
}

// TestCorrectionsShownAsStored: the corrections of the state stored with the last answer
// show in status.json as soon as an answer measured groups, and `envsched stats --json` on
// the stopped database shows the very same.
func TestCorrectionsShownAsStored(t *testing.T) {
	dir := t.TempDir()
	d, ans := firstAnswer(t, dir)
	var lines strings.Builder
	for i, tk := range ans.Tasks {
		for j := range 4 {
			fmt.Fprintf(&lines, `{"env":%q,"task_id":%q,"reward":%d,"request_id":"s1","rollout_id":"s1-%d-%d"}`+"\n",
				tk.Env, tk.TaskID, (i/2+j*(i%2))%2, i, j) // odd i: unequal groups; even i: all-equal
		}
	}
	appendFile(t, filepath.Join(dir, "rollouts", "w.jsonl"), lines.String())
	writeRequest(t, dir, "s2", `{"size": 12, "group_size": 4}`)
	waitBatch(t, d, "s2")
	var live struct {
		RequestsAnswered int64                  `json:"requests_answered"`
		Corrections      *propagate.Corrections `json:"corrections"`
	}
	waitUntil(t, "status after the second answer", func() bool {
		data, err := os.ReadFile(filepath.Join(dir, "status.json"))
		return err == nil && json.Unmarshal(data, &live) == nil && live.RequestsAnswered == 2
	})
	c := live.Corrections
	if c == nil || c.Dispersion["never_tried"].Groups == 0 || len(c.Envs) == 0 || c.ExplorationReturn.Groups == 0 {
		t.Fatalf("status.json corrections %+v; want the groups of s1 measured", c)
	}
	var rep struct {
		Corrections propagate.Corrections `json:"corrections"`
	}
	stopThenStats(t, d, dir, &rep)
	if !reflect.DeepEqual(rep.Corrections, *c) {
		t.Errorf("stats --json corrections %+v; status.json %+v", rep.Corrections, *c)
	}
}
