package record

import (
	"errors"
	"strings"
	"testing"
)

// TestTooDeepSaysSo: a line nested deeper than 512 levels (in a key envsched ignores, or as the
// whole line) is quarantined saying so, not as "invalid JSON": it is well-formed JSON, and a
// trainer told it is not would look for a syntax error that is not there. 511 levels are read.
func TestTooDeepSaysSo(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, tc := range []struct {
		line, reason string
	}{
		{`{"env":"e","task":"t","reward":1,"x":` + nest(511) + `}`, ""},
		{`{"env":"e","task":"t","reward":1,"x":` + nest(100000) + `}`, ReasonTooDeep},
		{`{"env":"e","task":"t","reward":1,"x":` + strings.Repeat(`{"a":`, 600) + "1" + strings.Repeat("}", 600) + `}`, ReasonTooDeep},
		{nest(1000), ReasonTooDeep},
		{`{"env":"e","task":"t","reward":1,"x":` + nest(600)[:1100] + `}`, ReasonTooDeep}, // broken past the limit too
		{`{"env":"e","task":"t","reward":1,"x":[}`, ReasonInvalidJSON},
	} {
		for name, parse := range map[string]func([]byte) error{
			"rollout": func(b []byte) error { _, err := ParseRollout(b); return err },
			"task":    func(b []byte) error { _, err := ParseTask(b); return err },
		} {
			err := parse([]byte(tc.line))
			var bad *BadLineError
			switch {
			case tc.reason == "" && err != nil:
				t.Errorf("%s %.60q: %v; want read", name, tc.line, err)
			case tc.reason != "" && (!errors.As(err, &bad) || bad.Reason != tc.reason):
				t.Errorf("%s %.60q: %v; want %q", name, tc.line, err, tc.reason)
			}
		}
	}
}
