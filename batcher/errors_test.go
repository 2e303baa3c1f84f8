package batcher

import (
	"fmt"
	"strings"
	"testing"
)

// TestUnknownEnvMessageIsBounded: the message of an unknown environment goes into an error
// file and a log line, so however long and however many the known names are, it stays short,
// names each listed one quoted (a newline in a name cannot break a log line) and says how many
// it left out.
func TestUnknownEnvMessageIsBounded(t *testing.T) {
	long := func(c byte, i int) string { return fmt.Sprintf("%s-%d", strings.Repeat(string(c), 4096), i) }
	many := func(n int, name func(i int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = name(i)
		}
		return out
	}
	cases := []struct {
		name  string
		known []string
		want  []string // substrings of the message
	}{
		{"three short names", []string{"alpha", "beta", "gamma"},
			[]string{`the 3 known are "alpha", "beta", "gamma"`}},
		{"twelve names of 4 KiB", many(12, func(i int) string { return long('x', i) }),
			[]string{"the 12 known are", "(4098 bytes)", " and 2 more"}},
		{"a thousand names", many(1000, func(i int) string { return fmt.Sprintf("env-%d", i) }),
			[]string{`"env-0", "env-1"`, " and 990 more"}},
		{"names with control characters", []string{"a\nb", "c\x1b[2Jd"},
			[]string{`"a\nb"`, `"c\x1b[2Jd"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg := (&UnknownEnvError{Field: "envs", Env: strings.Repeat("n", 5000), Known: tc.known}).Error()
			if len(msg) > 2000 {
				t.Errorf("message is %d bytes, want at most 2000: %.300s…", len(msg), msg)
			}
			if strings.ContainsAny(msg, "\n\x1b") {
				t.Errorf("message holds a raw control character: %q", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message lacks %q: %.400s", w, msg)
				}
			}
		})
	}
}

// TestUnknownEnvSaysWhichWasMeant (newuser14): a request's typo of an environment listed after
// the first ten (the real catalogue has 41: `tau2-retial` for `tau2-retail`) was told "the 41
// known are ... and 31 more", without the one meant. The nearest known name within two edits
// (one for four letters or fewer) is now named; a name near none names none.
func TestUnknownEnvSaysWhichWasMeant(t *testing.T) {
	known := make([]string, 0, 41)
	for i := range 38 {
		known = append(known, fmt.Sprintf("bfcl-%02d", i))
	}
	known = append(known, "tau2-airline", "tau2-retail", "tau2-telecom")
	for _, tc := range []struct{ asked, want string }{
		{"tau2-retial", `unknown environment "tau2-retial" (did you mean "tau2-retail"?)`},
		{"tau2-retai", `(did you mean "tau2-retail"?)`},
		{"tau2-telecomm", `(did you mean "tau2-telecom"?)`},
		{"bfcl-7", `(did you mean "bfcl-07"?)`},
		{"gsm8k", ""},
		{"tau2", ""},
	} {
		msg := (&UnknownEnvError{Field: "envs", Env: tc.asked, Known: known}).Error()
		if tc.want == "" {
			if strings.Contains(msg, "did you mean") {
				t.Errorf("%q: %q offers a name nothing like it", tc.asked, msg)
			}
			continue
		}
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%q: %q, want it to say %s", tc.asked, msg, tc.want)
		}
	}
	if got := nearEnv(strings.Repeat("a", 5000), []string{strings.Repeat("a", 4999)}); got != "" {
		t.Errorf("a name of 5000 bytes was compared (%.20q…): the work is to stay bounded", got)
	}
}
