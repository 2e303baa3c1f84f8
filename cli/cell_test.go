package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/envsched/envsched/daemon"
)

// hostileNames are environment and task names a trainer's files may hold (rollout lines accept
// any non-empty valid UTF-8): escape sequences that would drive the reader's terminal, and tabs
// and newlines that would break a table's columns and rows.
var hostileNames = []string{"clear\x1b[2Jscreen", "title\x1b]0;owned\x07", "tab\tbed", "two\nlines", "nul\x00", "bidi\u202eevil"}

// TestTablesQuoteHostileNames: the tables of `stats`, `batch` and `status` show such names
// Go-quoted, one row each, with no raw control character; plain names are shown unchanged.
func TestTablesQuoteHostileNames(t *testing.T) {
	rep := statsReport{GroupSize: 8, Envs: map[string]statsRow{"plain-env": {Tasks: 1}}}
	for _, n := range hostileNames {
		rep.Envs[n] = statsRow{Tasks: 1}
	}
	var stats bytes.Buffer
	if err := writeStatsTable(&stats, rep); err != nil {
		t.Fatal(err)
	}
	table, _, _ := strings.Cut(stats.String(), "\ncalibration")
	checkTable(t, "stats", table+"\n", len(hostileNames)+5) // header, plain and hostile rows, total, counts, blank

	type task struct {
		Env    string `json:"env"`
		TaskID string `json:"task_id"`
		Rank   int    `json:"rank"`
	}
	ans := map[string]any{"id": "b1", "size": len(hostileNames) + 1}
	tasks := []task{{Env: "plain-env", TaskID: "plain-env", Rank: 1}}
	for i, n := range hostileNames {
		tasks = append(tasks, task{Env: n, TaskID: n, Rank: i + 2})
	}
	ans["tasks"] = tasks
	data, err := json.Marshal(ans)
	if err != nil {
		t.Fatal(err)
	}
	var batch bytes.Buffer
	if err := printBatch(&batch, data, false); err != nil {
		t.Fatal(err)
	}
	checkTable(t, "batch", batch.String(), len(hostileNames)+3) // title, header, plain and hostile rows

	last := hostileNames[0]
	st := daemon.Status{Version: hostileNames[1], DB: hostileNames[2] + hostileNames[3], WatchMode: hostileNames[4],
		StartedAt: hostileNames[5], UpdatedAt: hostileNames[0], LastRequest: &last}
	var status bytes.Buffer
	if err := writeStatusText(&status, st, time.Second, true, true); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(status.String(), "\x1b\x07\x00\t\u202e") {
		t.Errorf("status shows a raw control character:\n%q", status.String())
	}
}

func checkTable(t *testing.T, what, out string, lines int) {
	t.Helper()
	if strings.ContainsAny(out, "\x1b\x07\x00\t\u202e") {
		t.Errorf("%s shows a raw control character:\n%q", what, out)
	}
	if n := strings.Count(out, "\n"); n != lines {
		t.Errorf("%s has %d lines; want %d (one row per name):\n%s", what, n, lines, out)
	}
	if !strings.Contains(out, "plain-env") || !strings.Contains(out, `"tab\tbed"`) {
		t.Errorf("%s does not show plain-env as it is and tab\\tbed quoted:\n%s", what, out)
	}
}

// TestTablesTellNormalisationTwinsApart: "café" composed (NFC) and decomposed (NFD, "e" plus a
// combining accent) are two environments; the stats table showed two rows that read "café".
// The decomposed one is shown quoted with its accent escaped.
func TestTablesTellNormalisationTwinsApart(t *testing.T) {
	rep := statsReport{GroupSize: 8, Envs: map[string]statsRow{"caf\u00e9": {Tasks: 1}, "cafe\u0301": {Tasks: 2}}}
	var out bytes.Buffer
	if err := writeStatsTable(&out, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"cafe\u0301"`) || !strings.Contains(out.String(), "\ncafé ") {
		t.Errorf("the two environments do not read apart:\n%s", out.String())
	}
}

// TestCellShowsLookAlikeTwinsApart (review13): 700c495 quotes a name not in NFC so that
// "cafe\u0301" and "caf\u00e9", two environments, are not two rows that read "café". The
// look-alike rule of requests (batcher/lookalike.go) treats more names as reading alike: spaces
// at either end and compatibility forms (the ligature "ﬁ" for "fi"). Those are shown as they
// are, so `stats` still shows two rows that read the same ("math" and "math ").
func TestCellShowsLookAlikeTwinsApart(t *testing.T) {
	for _, pair := range [][2]string{{"math", "math "}, {"math", " math"}, {"fix", "\ufb01x"}} {
		shown := func(s string) string { return norm.NFKC.String(strings.TrimSpace(cell(s))) } // how it reads
		if shown(pair[0]) == shown(pair[1]) {
			t.Errorf("cell(%+q) = %q reads as cell(%+q) = %q", pair[1], cell(pair[1]), pair[0], cell(pair[0]))
		}
	}
}

// TestStatsTableMeanRewardWithoutRollouts (newuser16): an environment of the catalogue with no
// rollouts yet showed "mean reward 0.000", which reads as every reward 0 (with --reward-min -1,
// as a mean in the middle of the range); it shows "-", as its degenerate share does, and an
// environment with rollouts keeps its number.
func TestStatsTableMeanRewardWithoutRollouts(t *testing.T) {
	rep := statsReport{GroupSize: 8, Envs: map[string]statsRow{
		"untried": {Tasks: 3},
		"tried":   {Tasks: 2, TasksSeen: 1, Rollouts: 4, MeanReward: 0.25, Groups: 1},
	}, Totals: statsRow{Tasks: 5, TasksSeen: 1, Rollouts: 4, MeanReward: 0.25, Groups: 1}}
	var out bytes.Buffer
	if err := writeStatsTable(&out, rep); err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(line); len(f) > 4 {
			rows[f[0]] = f
		}
	}
	if got := rows["untried"]; len(got) < 5 || got[4] != "-" {
		t.Errorf("untried: mean reward cell %q; want -\n%s", got, out.String())
	}
	if got := rows["tried"]; len(got) < 5 || got[4] != "0.250" {
		t.Errorf("tried: mean reward cell %q; want 0.250\n%s", got, out.String())
	}
}
