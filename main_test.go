package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/envsched/envsched/storage"
)

// run maps every kind of outcome to its exit code: 0 success, 1 an error, 2 bad usage, 3 the
// database held by another holder of its lock.
func TestRunExitCodes(t *testing.T) {
	held := t.TempDir()
	db, err := storage.Open(filepath.Join(held, "envsched.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	missing := filepath.Join(t.TempDir(), "nothing")
	if err := os.Mkdir(missing, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want int
	}{
		{[]string{"--version"}, 0},
		{[]string{"report", "--dir", missing, "--out", filepath.Join(missing, "r.html")}, 1},
		{[]string{"nocmd"}, 2},
		{[]string{"stats", "--nope"}, 2},
		{[]string{"ingest", "--dir", held}, 3},
	}
	for _, c := range cases {
		if got := run(append([]string{"envsched"}, c.args...)); got != c.want {
			t.Errorf("envsched %v: exit %d, want %d", c.args, got, c.want)
		}
	}
}
