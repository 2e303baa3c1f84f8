package batcher

import (
	"strings"
	"testing"
)

// TestLookAlikeMessageShowsTheDifference: the error for such a name names the known one and
// shows both with every non-ASCII character escaped, where the difference is seen.
func TestLookAlikeMessageShowsTheDifference(t *testing.T) {
	for _, field := range []string{"envs", "exclude_envs"} {
		msg := (&UnknownEnvError{Field: field, Env: "cafe\u0301", Known: []string{"caf\u00e9"}, Like: "caf\u00e9"}).Error()
		for _, want := range []string{field + " names", `known environment "café"`, `asked "cafe\u0301"`,
			`known "caf\u00e9"`, "byte for byte"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: message lacks %q: %s", field, want, msg)
			}
		}
	}
}
