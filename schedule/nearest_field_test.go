package schedule

import (
	"strings"
	"testing"
)

// TestDidYouMeanNamesTheNearestField (review11): reqfields' nearField (513fea1) returns the
// first field, in the order size, group_size, step, envs, exclude_envs, allow_repeats, seed,
// that passes each test, not the field the key is nearest to. So the advice names the wrong
// field:
//   - keys one edit from seed: "see" gets `did you mean "size"?`, "sed", "seen" and "steed"
//     `did you mean "step"?`; followed, the batch's size or step takes the value meant as a seed;
//   - keys that hold exclude_envs ("exclude_envs_list", "excludeEnvsList", "my_exclude_envs")
//     hold envs too, which is tried first: `did you mean "envs"?`; followed, the request asks for
//     exactly the environments it meant to exclude.
func TestDidYouMeanNamesTheNearestField(t *testing.T) {
	for key, field := range map[string]string{
		"see": "seed", "sed": "seed", "seen": "seed", "steed": "seed",
		"exclude_envs_list": "exclude_envs", "excludeEnvsList": "exclude_envs", "my_exclude_envs": "exclude_envs",
	} {
		_, err := ParseRequest([]byte(`{"`+key+`": 12345}`), 64, 8)
		if err == nil || !strings.Contains(err.Error(), `did you mean "`+field+`"?`) {
			t.Errorf("key %q: %v; want the advice to name %s", key, err, field)
		}
	}
}
