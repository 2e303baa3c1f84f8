package batcher

import (
	"strings"
	"testing"
)

// TestLookAlikeNames: a name that reads as a known environment, byte for byte another, is found
// (NFD for NFC, case, a zero-width space or bidirectional mark, full-width letters, spaces at
// its ends); a name that reads otherwise, or as two known ones, is not.
func TestLookAlikeNames(t *testing.T) {
	known := []string{"Retail", "airline", "caf\u00e9", "plain", "twin", "Twin "}
	cases := []struct{ name, want string }{
		{"cafe\u0301", "caf\u00e9"},          // NFD of the NFC name
		{"retail", "Retail"},                 // case
		{"RETAIL", "Retail"},                 // case
		{"plain\u200b", "plain"},             // zero-width space
		{"\u200eairline", "airline"},         // left-to-right mark
		{"ａｉｒｌｉｎｅ", "airline"},               // full-width letters
		{" plain ", "plain"},                 // spaces at its ends
		{"CAFE\u0301", "caf\u00e9"},          // NFD and case
		{"TWIN", ""},                         // two known names read as it
		{"retails", ""},                      // another name
		{"", ""},                             //
		{"\u200b", ""},                       // nothing but an invisible character
		{"caf" + strings.Repeat("e", 3), ""}, //
	}
	for _, tc := range cases {
		if got := lookAlike(tc.name, known); got != tc.want {
			t.Errorf("lookAlike(%+q) = %+q, want %+q", tc.name, got, tc.want)
		}
	}
}

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
