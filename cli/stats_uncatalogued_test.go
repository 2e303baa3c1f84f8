package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStatsCountsTasksNotInTheCatalogue: `stats` counts per environment the tasks no catalogue
// row describes, and says so in the table when a catalogue exists (T1 written for the
// catalogue's t1: its rollouts count for no catalogued task); a database fed by rollouts alone,
// every task without a row, gets the count in --json and no line in the table.
func TestStatsCountsTasksNotInTheCatalogue(t *testing.T) {
	write := func(dir, rel, body string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	type report struct {
		Envs map[string]struct {
			NotInCatalog int64 `json:"not_in_catalog"`
		} `json:"envs"`
		Totals struct {
			NotInCatalog int64 `json:"not_in_catalog"`
		} `json:"totals"`
		Catalogued bool `json:"catalogued"`
	}
	read := func(dir string) (report, string) {
		t.Helper()
		if code, _, msg := runApp("ingest", "--dir", dir); code != 0 {
			t.Fatal(msg)
		}
		code, out, msg := runApp("stats", "--dir", dir, "--json")
		if code != 0 {
			t.Fatal(msg)
		}
		var rep report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		_, table, _ := runApp("stats", "--dir", dir)
		return rep, table
	}

	dir := t.TempDir()
	write(dir, "catalog/c.jsonl", `{"env":"retail","task_id":"t1"}`+"\n"+`{"env":"airline","task_id":"a1"}`+"\n")
	write(dir, "rollouts/r.jsonl", `{"env":"retail","task":"T1","reward":1}`+"\n"+
		`{"env":"retail","task":"t1","reward":1}`+"\n"+`{"env":"Airline","task":"a1","reward":0}`+"\n"+
		`{"env":"airline","task":"a2","reward":0}`+"\n")
	rep, table := read(dir)
	if !rep.Catalogued || rep.Envs["retail"].NotInCatalog != 1 || rep.Envs["Airline"].NotInCatalog != 1 ||
		rep.Envs["airline"].NotInCatalog != 1 || rep.Totals.NotInCatalog != 3 {
		t.Errorf("stats --json: %+v; want retail 1, Airline 1, airline 1, total 3, catalogued", rep)
	}
	if !strings.Contains(table, "tasks not in the catalogue: 3,") {
		t.Errorf("the table does not count the 3 tasks not in the catalogue:\n%s", table)
	}

	bare := t.TempDir()
	write(bare, "rollouts/r.jsonl", `{"env":"retail","task":"T1","reward":1}`+"\n")
	rep, table = read(bare)
	if rep.Catalogued || rep.Totals.NotInCatalog != 1 {
		t.Errorf("rollouts alone: stats --json %+v; want 1 task not in the catalogue, catalogued false", rep)
	}
	if strings.Contains(table, "not in the catalogue") {
		t.Errorf("rollouts alone: the table speaks of the catalogue:\n%s", table)
	}
}
