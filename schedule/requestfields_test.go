package schedule

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/envsched/envsched/storage/storagetest"
)

// TestRequestKeysIgnoredOrRefused: the original contract says which keys a request has and
// that rollout lines' other keys are ignored, but not what a request's other keys do. A
// trainer's own bookkeeping ("id", "comment", a run name) must not cost it every batch, so such
// keys are ignored and listed in Request.Ignored (the daemon logs them); a key that looks like
// a misspelled field is refused, since serving it with the defaults would hide the mistake.
func TestRequestKeysIgnoredOrRefused(t *testing.T) {
	for _, k := range []string{"id", "comment", "run_name", "trainer", "n", "priority", "meta", "x"} {
		req, err := ParseRequest([]byte(`{"size": 4, "`+k+`": {"any": [1, 2]}}`), 64, 8)
		if err != nil {
			t.Errorf("key %q: %v, want it ignored", k, err)
			continue
		}
		if req.Size != 4 || !slices.Equal(req.Ignored, []string{k}) {
			t.Errorf("key %q: size %d, ignored %q; want 4 and [%s]", k, req.Size, req.Ignored, k)
		}
	}
	for k, field := range map[string]string{
		"sise": "size", "Size": "size", "SIZE": "size", "szie": "size", "batch_size": "size", "sizes": "size",
		"grup_size": "group_size", "group-size": "group_size", "groupSize": "group_size", "group": "group_size",
		"steps": "step", "global_step": "step", "env": "envs", "environments": "envs", "exclude_environments": "exclude_envs", "sample": "", "stage": "", "exclude": "exclude_envs",
		"excludeEnvs": "exclude_envs", "allowRepeats": "allow_repeats", "repeats": "allow_repeats", "seeds": "seed",
		"random_seed": "seed",
	} {
		_, err := ParseRequest([]byte(`{"`+k+`": 4}`), 64, 8)
		if field == "" { // not near enough to any field: ignored
			if err != nil {
				t.Errorf("key %q: %v, want it ignored", k, err)
			}
			continue
		}
		var re *RequestError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), `did you mean "`+field+`"?`) {
			t.Errorf("key %q: %v, want it refused as a near miss of %q", k, err, field)
		}
	}
	// A near miss is quoted cut in the message; a key longer than any typo is ignored.
	_, err := ParseRequest([]byte(`{"size`+strings.Repeat("z", 56)+`": 1}`), 64, 8)
	if err == nil || len(err.Error()) > 200 {
		t.Errorf("a 60-byte near-miss key: %v, want a refusal of under 200 bytes", err)
	}
	long := "size" + strings.Repeat("z", 5000)
	if req, err := ParseRequest([]byte(`{"`+long+`": 1}`), 64, 8); err != nil || len(req.Ignored) != 1 {
		t.Errorf("a 5,004-byte key: %v, ignored %d keys; want it ignored", err, len(req.Ignored))
	}
}

// TestIgnoredKeysDoNotChangeTheAnswer: the same request with and without an ignored key, in
// two databases of the same state, gets the same batch.
func TestIgnoredKeysDoNotChangeTheAnswer(t *testing.T) {
	a := answerIn(t, `{"size": 6, "seed": 3}`)
	b := answerIn(t, `{"size": 6, "seed": 3, "id": "step-7", "comment": "from the trainer"}`)
	if a != b {
		t.Errorf("an ignored key changed the answer:\n%s\n%s", a, b)
	}
}

func answerIn(t *testing.T, body string) string {
	t.Helper()
	db := storagetest.Open(t)
	fill(t, db, 3, 20)
	out, err := newScheduler(t, db, Options{}).Answer("q", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "created_at")
	j, _ := json.Marshal(m)
	return string(j)
}
