package ingest

import (
	"os"
	"testing"
)

// TestCatalogueMovedToRolloutsAndBackListsItsTasks (review14): a catalogue file moved into
// rollouts/ must retire its tasks at once, as deleting it does (no catalogue file lists them);
// moved back into catalog/ it resumes where it was (hostile14a, 4641a26) and lists them again.
// Fails: state() (ingest/run.go) sets catalogChanged only when the file found is of kind
// catalog, so a catalogue file marked gone because it is found in rollouts/ changes no list:
// its tasks stay in service, through any number of scans and a restart, until some unrelated
// catalogue file changes (then they retire). Two catalogue files, so the catalogue is never
// empty.
func TestCatalogueMovedToRolloutsAndBackListsItsTasks(t *testing.T) {
	e := newEnv(t, Options{})
	if err := os.MkdirAll(e.path("rollouts"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.write("catalog/keep.jsonl", `{"env":"e","task":"k1"}`+"\n")
	e.write("catalog/c.jsonl", `{"env":"e","task":"1"}`+"\n"+`{"env":"e","task":"2"}`+"\n")
	e.scan()
	if r := e.retired(); len(r) != 0 {
		t.Fatalf("retired %v before any move", r)
	}
	if err := os.Rename(e.path("catalog/c.jsonl"), e.path("rollouts/c.jsonl")); err != nil {
		t.Fatal(err)
	}
	e.scan()
	if r := e.retired(); len(r) != 2 {
		t.Fatalf("moved into rollouts/: retired %v; want e/1 and e/2", r)
	}
	if err := os.Rename(e.path("rollouts/c.jsonl"), e.path("catalog/c.jsonl")); err != nil {
		t.Fatal(err)
	}
	e.scan()
	if r := e.retired(); len(r) != 0 {
		t.Errorf("moved back into catalog/: retired %v; want none (the file lists them again)", r)
	}
	e.reopen()
	e.scan()
	if r := e.retired(); len(r) != 0 {
		t.Errorf("moved back into catalog/, after a restart: retired %v; want none", r)
	}
}
