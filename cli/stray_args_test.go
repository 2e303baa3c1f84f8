package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestStrayArgumentRefusedByEveryCommand (review11): protocol10 made a word that is not a flag
// exit code 2 for `envsched run` (urfave/cli stops reading flags at it, so every flag after it
// was dropped unread), but the other commands that take only flags have the same parser and
// still drop the flags after a stray word without a word: `batch --dir D x --size 6` chose a
// batch of the default 64, `ingest --dir D x --db OTHER` ingested into DIR/envsched.db instead
// of OTHER, `compact --dir D x --db OTHER` compacted the other database, `stats` printed every
// environment instead of the one asked. Each must be a bad command line (exit 2), as for run.
func TestStrayArgumentRefusedByEveryCommand(t *testing.T) {
	dir := exchangeDir(t)
	if code, _, msg := runApp("ingest", "--dir", dir); code != exitOK {
		t.Fatalf("ingest: exit %d: %s", code, msg)
	}
	other := filepath.Join(t.TempDir(), "other.db")
	for _, args := range [][]string{
		{"batch", "--dir", dir, "stray", "--size", "6", "--json"},
		{"ingest", "--dir", dir, "stray", "--db", other},
		{"stats", "--dir", dir, "stray", "--env", "env-1"},
		{"compact", "--dir", dir, "stray", "--db", other},
		{"report", "--dir", dir, "--out", filepath.Join(t.TempDir(), "r.html"), "stray", "--db", other},
	} {
		code, out, msg := runApp(args...)
		if code != exitUsage {
			t.Errorf("envsched %s: exit %d (%.120q, stdout %d bytes); want 2: the flags after %q were not read",
				strings.Join(args, " "), code, msg, len(out), "stray")
		}
	}
}
