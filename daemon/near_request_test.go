package daemon

import "testing"

// TestNearRequestNamesAForgottenExtension (newuser14): a trainer that wrote requests/step-000001
// (the .json forgotten) waited for ever with nothing in the log, while step-000001.JSON was named.
// A name that is an ID with no extension at all is now named too; other files are not.
func TestNearRequestNamesAForgottenExtension(t *testing.T) {
	for name, want := range map[string]bool{
		"step-000001":       true,
		"step-1.JSON":       true,
		"step-1.jsonl":      true,
		"step-1.json":       false, // a request
		"notes.txt":         false,
		"README":            true, // an ID with no extension: named once, harmless
		".step-1":           false,
		"step-1.tmp":        false,
		"step 1":            false, // no ID
		"step-000001.error": false,
	} {
		if got := nearRequest(name); got != want {
			t.Errorf("nearRequest(%q) = %v, want %v", name, got, want)
		}
	}
}
