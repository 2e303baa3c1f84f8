package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/envsched/envsched/ledger"
)

// TestStatsShowsCalibration: on a generated run whose groups all complete, `stats` prints the
// ledger's tables and the savings estimate as one, and `stats --json` the same numbers; --env
// keeps one environment's cells and the summary over all.
func TestStatsShowsCalibration(t *testing.T) {
	dir, run := generatedDir(t)
	code, out, errOut := opsApp(t, "stats", "--dir", dir, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Calibration ledger.Detail `json:"calibration"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	c := rep.Calibration
	if c.Overall.Groups == 0 || c.Channels["random_slot"].Groups != int64(run.Answers) || c.Open != 0 ||
		len(c.Reliability) != ledger.Bins || len(c.Envs) != len(run.Envs) {
		t.Fatalf("calibration %+v; want every group measured, one random slot per answer, %d envs", c, len(run.Envs))
	}
	code, table, _ := opsApp(t, "stats", "--dir", dir)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{fmt.Sprintf("groups measured %d", c.Overall.Groups), "never_tried", "rechosen",
		"random_slot", fmt.Sprintf("last %d answers", min(ledger.RecentAnswers, run.Answers)), "reliability", "(an estimate)", run.Envs[0] + " / rechosen"} {
		if !strings.Contains(table, want) {
			t.Errorf("stats table does not say %q:\n%s", want, table)
		}
	}
	code, out, _ = opsApp(t, "stats", "--dir", dir, "--json", "--env", run.Envs[1])
	var one struct {
		Calibration ledger.Detail `json:"calibration"`
	}
	if err := json.Unmarshal([]byte(out), &one); code != 0 || err != nil {
		t.Fatalf("exit %d, %v", code, err)
	}
	if len(one.Calibration.Envs) != 1 || one.Calibration.Overall != c.Overall {
		t.Errorf("--env: %d envs, overall %+v; want one env and the overall of all", len(one.Calibration.Envs), one.Calibration.Overall)
	}
}
