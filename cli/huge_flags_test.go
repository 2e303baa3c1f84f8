package cli

import (
	"strings"
	"testing"
)

// TestHugeSimAndDemoFlagsAreRefused: `envsched demo --steps 99999999999` and `envsched sim` with
// --steps, --seeds, --batch-size or --group-size of 10^11 died with "fatal error: runtime: out of
// memory" and a goroutine dump (exit 2), or (--group-size) ran a first step for hours while
// SIGTERM went unheard; each is now a usage error that names the bound.
func TestHugeSimAndDemoFlagsAreRefused(t *testing.T) {
	cases := [][]string{
		{"demo", "--steps", "99999999999"},
		{"sim", "--policies", "random", "--out", "", "--steps", "99999999999"},
		{"sim", "--policies", "random", "--out", "", "--seeds", "99999999999"},
		{"sim", "--policies", "random", "--out", "", "--steps", "2", "--group-size", "99999999999"},
		{"sim", "--policies", "random", "--out", "", "--steps", "2", "--batch-size", "99999999999"},
	}
	for _, args := range cases {
		code, _, errs := runCLI(args...)
		if code != exitUsage || !strings.Contains(errs, " to ") {
			t.Errorf("%s: exit %d, %q; want exit %d naming the bound", strings.Join(args, " "), code, errs, exitUsage)
		}
	}
}
