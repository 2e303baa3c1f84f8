package record

import (
	"slices"
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
		{"plain", ""},                        // the known name itself is no look-alike of itself
	}
	for _, tc := range cases {
		if got := LookAlike(tc.name, slices.Values(known)); got != tc.want {
			t.Errorf("LookAlike(%+q) = %+q, want %+q", tc.name, got, tc.want)
		}
	}
}
