package sim

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestExtraPolicyNamesAreKnown: the policies `envsched sim --help` and the unknown-policy message
// name beside the default list are policies Run takes (the message listed only the default
// list, so envsched-stuck and envsched-driftcentre, which README names, were never offered).
func TestExtraPolicyNamesAreKnown(t *testing.T) {
	for _, name := range ExtraPolicyNames() {
		if slices.Contains(PolicyNames(), name) || !knownPolicy(name) {
			t.Errorf("%s: in the default list %v, or unknown to Run", name, slices.Contains(PolicyNames(), name))
		}
	}
	cfg := DefaultConfig()
	cfg.Policies = []string{"no-such-policy"}
	err := cfg.Validate()
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("an unknown policy: %v", err)
	}
	for _, name := range ExtraPolicyNames() {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("the unknown-policy message does not name %s: %v", name, err)
		}
	}
}
