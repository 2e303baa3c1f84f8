package schedule

import (
	"slices"
	"strings"
	"testing"
)

// TestNearFieldRuleSiblings (fix11): the siblings of review11's nearest-field and twice-given
// findings. Identifiers ("id", a name ending in _id, camelCase too) and four-letter words two
// edits from a field ("time", "name") are bookkeeping, ignored and listed; a swap of two letters
// is one edit; camelCase is read as snake_case; a field given twice is still refused, and a
// near miss given twice is refused as a near miss.
func TestNearFieldRuleSiblings(t *testing.T) {
	for _, k := range []string{"time", "name", "group_id", "step_id", "requestId", "seed_id", "run_id", "ID"} {
		req, err := ParseRequest([]byte(`{"size": 4, "`+k+`": 7, "`+k+`": 8}`), 64, 8)
		if err != nil || req.Size != 4 || !slices.Equal(req.Ignored, []string{k}) {
			t.Errorf("key %q (twice): %v, size %d, ignored %q; want it ignored", k, err, req.Size, req.Ignored)
		}
	}
	for k, field := range map[string]string{
		"stpe": "step", "sede": "seed", "allow_repeat": "allow_repeats", "exclude-envs-list": "exclude_envs",
		"ExcludeEnvs": "exclude_envs", "groupSizeMax": "group_size", "max_group_size": "group_size",
		"envs_to_exclude": "exclude_envs", "env_exclude": "exclude_envs", "envs_excluded": "exclude_envs", "exclude_env": "exclude_envs", "seen": "seed",
	} {
		_, err := ParseRequest([]byte(`{"`+k+`": 4}`), 64, 8)
		if err == nil || !strings.Contains(err.Error(), `did you mean "`+field+`"?`) {
			t.Errorf("key %q: %v; want the advice to name %s", k, err, field)
		}
	}
	for body, want := range map[string]string{
		`{"size": 4, "size": 5}`:           `gives "size" twice`,
		`{"seed": 1, "id": 2, "seed": 1}`:  `gives "seed" twice`,
		`{"grup_size": 4, "grup_size": 4}`: `did you mean "group_size"?`,
	} {
		if _, err := ParseRequest([]byte(body), 64, 8); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want it refused (%s)", body, err, want)
		}
	}
}
