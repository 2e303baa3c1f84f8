package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestStrayArgumentRefusedByTheOtherCommands (fix11, siblings of review11's stray-argument
// finding): the commands the review did not list drop the flags after a stray word the same
// way (export wrote to standard output instead of --out, status read DIR's status with the
// default --stale-after, sim ran the default scenario); every command that takes only flags
// refuses it (exit 2) naming the word, and a command with subcommands names the unknown one.
func TestStrayArgumentRefusedByTheOtherCommands(t *testing.T) {
	dir := exchangeDir(t)
	if code, _, msg := runApp("ingest", "--dir", dir); code != exitOK {
		t.Fatalf("ingest: exit %d: %s", code, msg)
	}
	tmp := t.TempDir()
	for _, args := range [][]string{
		{"export", "--dir", dir, "--what", "tasks", "stray", "--out", filepath.Join(tmp, "t.jsonl")},
		{"status", "--dir", dir, "stray", "--stale-after", "1h"},
		{"sim", "stray", "--seeds", "1"},
		{"demo", "stray", "--steps", "1"},
		{"catalog", "stray", "--dir", dir},
	} {
		code, out, msg := runApp(args...)
		if code != exitUsage || !strings.Contains(msg, "stray") {
			t.Errorf("envsched %s: exit %d (%.160q, stdout %d bytes); want 2 naming %q",
				strings.Join(args, " "), code, msg, len(out), "stray")
		}
	}
}

// TestCatalogImportHelpAfterFile (fix11): `catalog import FILE --help`, read by its own parser
// after FILE, exited 2 with "flag: help requested"; it prints the command's help, exit 0.
func TestCatalogImportHelpAfterFile(t *testing.T) {
	code, out, msg := runApp("catalog", "import", "x.jsonl", "--help")
	if code != exitOK || !strings.Contains(out, "catalog import") {
		t.Errorf("catalog import FILE --help: exit %d %q, stdout %.80q; want the help, exit 0", code, msg, out)
	}
}
