package cli

import "testing"

// Bad usage of any command exits 2: an unknown flag, a bad flag value, a required flag left
// out, an unknown command or subcommand.
func TestUsageErrorsExitTwo(t *testing.T) {
	cases := [][]string{
		{"nocmd"},
		{"catalog", "nosub"},
		{"ingest", "--nope"},
		{"stats", "--nope"},
		{"stats"},
		{"batch", "--dir", t.TempDir(), "--size", "abc"},
		{"status", "--nope"},
		{"report", "--dir", t.TempDir()},
		{"export", "--nope"},
		{"compact", "--nope"},
		{"run", "--nope"},
		{"sim", "--nope"},
		{"demo", "--nope"},
		{"catalog", "import", "--nope"},
	}
	for _, args := range cases {
		if code, _, errs := runCLI(args...); code != exitUsage {
			t.Errorf("envsched %v: exit %d, want %d (%s)", args, code, exitUsage, errs)
		}
	}
}
