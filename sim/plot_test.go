package sim

import (
	"fmt"
	"slices"
	"testing"
)

// TestEveryPolicyHasItsOwnLook: every policy is in a panel and has a style; no two policies
// share colour and dash pattern; no two policies of one panel share a colour.
func TestEveryPolicyHasItsOwnLook(t *testing.T) {
	seen := map[string]string{}
	for _, name := range PolicyNames() {
		st, ok := PolicyStyles[name]
		if !ok {
			t.Errorf("policy %s has no style", name)
			continue
		}
		look := fmt.Sprint(st.Color, st.Dashes)
		if other, dup := seen[look]; dup {
			t.Errorf("%s and %s look the same (%s)", name, other, look)
		}
		seen[look] = name
		in := false
		for _, g := range PlotGroups {
			in = in || slices.Contains(g.Policies, name)
		}
		if !in {
			t.Errorf("policy %s is in no panel", name)
		}
	}
	for _, g := range PlotGroups {
		colours := map[string]string{}
		for _, name := range g.Policies {
			c := fmt.Sprint(PolicyStyles[name].Color)
			if other, dup := colours[c]; dup {
				t.Errorf("panel %q: %s and %s share colour %s", g.Title, name, other, c)
			}
			colours[c] = name
		}
	}
}
