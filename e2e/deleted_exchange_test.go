package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDatabaseOfADeletedExchangeDirServesAnother (review13): the sibling of
// TestOneDatabaseForTwoExchangeDirs with the first folder deleted rather than kept, the usual end
// of a training run (rm -rf the run's folder, ENVSCHED_DB still exported). bindExchange takes a
// recorded folder that is gone for "the folder moved" and gives the database to the new folder,
// whose first request, named as the first run's was (step-000001), is answered from the old
// run's stored answer: tasks of a catalogue the new folder does not have.
func TestDatabaseOfADeletedExchangeDirServesAnother(t *testing.T) {
	_, db, first, second := firstRunOfASharedDB(t)
	must(t, os.RemoveAll(first)) // the run is over: its folder deleted, the database kept

	d := secondRunOfASharedDB(t, second, db)
	if d.exited() {
		return // refused: fine
	}
	var b struct {
		Tasks []struct{ Env string } `json:"tasks"`
	}
	data, _ := os.ReadFile(filepath.Join(second, "batches", "step-000001.json"))
	must(t, json.Unmarshal(data, &b))
	for _, task := range b.Tasks {
		if task.Env != "other" {
			t.Fatalf("the second directory's step-000001 was answered with the deleted first directory's "+
				"stored batch (env %q, not in its catalogue): %s\nlog:\n%s", task.Env, data,
				tail(grepLines(d.stderr.String(), "exchange directory"), 2000))
		}
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
