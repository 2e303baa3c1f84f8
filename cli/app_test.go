package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

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
		// values the daemon's Config would silently replace by its defaults, and a reward range
		// whose width overflows (every reward would normalise to 0)
		{"run", "--dir", t.TempDir(), "--batch-size", "0"},
		{"run", "--dir", t.TempDir(), "--group-size", "0"},
		{"run", "--dir", t.TempDir(), "--poll-interval", "0s"},
		{"run", "--dir", t.TempDir(), "--poll", "--poll-interval", "1ns"},
		{"run", "--dir", t.TempDir(), "--rescan-interval", "-1s"},
		{"run", "--dir", t.TempDir(), "--status-interval", "0s"},
		{"run", "--dir", t.TempDir(), "--reward-min", "-1e308", "--reward-max", "1e308"},
		{"ingest", "--dir", t.TempDir(), "--reward-max", "Inf"},
		{"ingest", "--dir", t.TempDir(), "--reward-min", "-Inf"},
		{"stats", "--dir", t.TempDir(), "--group-size", "0"},
		{"stats", "--dir", t.TempDir(), "--snapshot-wait", "-1s"},
		{"export", "--dir", t.TempDir(), "--what", "tasks", "--snapshot-wait", "-1s"},
		{"report", "--dir", t.TempDir(), "--out", filepath.Join(t.TempDir(), "r.html"), "--snapshot-wait", "-1s"},
		{"status", "--dir", t.TempDir(), "--stale-after", "-1s"},
		{"status", "--dir", t.TempDir(), "--stale-after", "0s"},
	}
	for _, args := range cases {
		if code, _, errs := runCLI(args...); code != exitUsage {
			t.Errorf("envsched %v: exit %d, want %d (%s)", args, code, exitUsage, errs)
		}
	}
}

// TestHelpNamesOneDefaultPerFlag: no flag line of any command's --help names two defaults
// (a usage text saying "(default: ...)" beside urfave/cli's own "(default: 0)").
func TestHelpNamesOneDefaultPerFlag(t *testing.T) {
	for _, cmd := range NewApp().Commands {
		names := [][]string{{cmd.Name, "--help"}}
		for _, sub := range cmd.Subcommands {
			names = append(names, []string{cmd.Name, sub.Name, "--help"})
		}
		for _, args := range names {
			_, out, _ := runCLI(args...)
			for _, line := range strings.Split(out, "\n") {
				if strings.Count(line, "(default") > 1 {
					t.Errorf("envsched %s: %s", strings.Join(args, " "), strings.TrimSpace(line))
				}
			}
		}
	}
}

// TestHelpNamesTheRangesChecked: a flag that exits 2 outside a range its help does not show
// surprises the user; the ranges added to run's intervals and the selection weights are named
// in --help of every command that has them.
func TestHelpNamesTheRangesChecked(t *testing.T) {
	for _, c := range []struct {
		cmd, flag, want string
	}{
		{"run", "--poll-interval", "at least 1ms"},
		{"run", "--rescan-interval", "at least 1ms"},
		{"run", "--status-interval", "at least 1ms"},
		{"run", "--coverage-weight", "0 to 1e6"},
		{"run", "--sim-penalty", "0 to 1e6"},
		{"batch", "--coverage-weight", "0 to 1e6"},
		{"batch", "--sim-penalty", "0 to 1e6"},
		// and the other scheduling parameters' ranges, which propagate and batcher check
		{"run", "--kappa", "above 0"},
		{"run", "--feature-ridge", "0 or more"},
		{"run", "--prior-refit", "0 or more"},
		{"run", "--gamma", "0 to 1"},
		{"run", "--borrow-cap", "0 or more"},
		{"run", "--drift-rate", "0-1"},
		{"run", "--rechosen-rate", "0-1"},
		{"run", "--rechosen-trend", "0 to below 1"}, // 1 is refused: it said 0-1
		{"run", "--dispersion-memory", "0 to below 1"},
		{"run", "--random-share", "0 to 1"},
		{"run", "--quota-smoothing", "0 to 1"},
		{"run", "--min-share", "0 to 1"},
		{"run", "--max-share", "above 0, at most 1"},
		{"run", "--stale-rounds", "above 0"},
		{"batch", "--rechosen-trend", "0 to below 1"},
	} {
		_, out, _ := runCLI(c.cmd, "--help")
		found := false
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), c.flag+" ") {
				found = true
				if !strings.Contains(line, c.want) {
					t.Errorf("envsched %s --help: %s does not say %q", c.cmd, strings.TrimSpace(line), c.want)
				}
			}
		}
		if !found {
			t.Errorf("envsched %s --help has no line for %s", c.cmd, c.flag)
		}
	}
}
