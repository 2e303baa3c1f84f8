package schedule

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/envsched/envsched/record"
)

func TestParseRequestDefaults(t *testing.T) {
	for _, body := range []string{"", "  \n", "{}", `{"size": null}`} {
		req, err := ParseRequest([]byte(body), 64, 8)
		if err != nil || req.Size != 64 || req.GroupSize != 8 || req.Step != nil || req.Seed != nil || req.Envs != nil || req.AllowRepeats {
			t.Errorf("%q: %+v, %v; want every default", body, req, err)
		}
	}
	req, err := ParseRequest([]byte(`{"size": 3, "group_size": 16, "step": 41, "envs": ["a"], "exclude_envs": ["b"], "allow_repeats": true, "seed": 18446744073709551615}`), 64, 8)
	if err != nil || req.Size != 3 || req.GroupSize != 16 || *req.Step != 41 || req.Envs[0] != "a" || req.ExcludeEnvs[0] != "b" || !req.AllowRepeats || *req.Seed != 1<<64-1 {
		t.Errorf("every field: %+v, %v", req, err)
	}
	if req, err := ParseRequest([]byte(`{"seed": -1}`), 64, 8); err != nil || *req.Seed != 1<<64-1 {
		t.Errorf("seed -1: %+v, %v", req, err)
	}
}

// TestParseRequestEncodings: a request written by a tool that puts a UTF-8 byte order mark
// first (PowerShell, Notepad) is read as its JSON says; a UTF-16 request is refused with a
// message that says so, not with "invalid character 'ÿ'".
func TestParseRequestEncodings(t *testing.T) {
	req, err := ParseRequest([]byte("\ufeff{\"size\": 3}"), 64, 8)
	if err != nil || req.Size != 3 {
		t.Errorf("UTF-8 with a byte order mark: %+v, %v; want size 3", req, err)
	}
	if req, err := ParseRequest([]byte("\ufeff"), 64, 8); err != nil || req.Size != 64 {
		t.Errorf("a byte order mark alone: %+v, %v; want every default", req, err)
	}
	for name, body := range map[string][]byte{
		"UTF-16LE": {0xff, 0xfe, '{', 0, '}', 0},
		"UTF-16BE": {0xfe, 0xff, 0, '{', 0, '}'},
	} {
		_, err := ParseRequest(body, 64, 8)
		var re *RequestError
		if !errors.As(err, &re) || !strings.Contains(re.Msg, "UTF-16") {
			t.Errorf("%s: %v; want a RequestError that names UTF-16", name, err)
		}
	}
}

func TestSeedOfIsStable(t *testing.T) {
	// The seed of an ID must never change between releases: stored answers and replays rely on
	// it. FNV-1a 64 of "step-000041".
	if got := SeedOf("step-000041"); got != 0x81f386a82c457325 {
		t.Errorf("SeedOf(step-000041) = %#x, want 0x81f386a82c457325", got)
	}
	if SeedOf("a") == SeedOf("b") {
		t.Error("different IDs, same seed")
	}
}

// FuzzParseRequest checks that any body either parses into a request within the protocol's
// bounds or is refused with a RequestError; nothing panics.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{"", "{}", `{"size": 8}`, `{"size": 0}`, `{"envs": ["a", ""]}`, `[1]`, `{"seed": -5}`,
		`{"step": 1e3}`, `{"step": 9223372036854775807}`, `{"step": 1000000001}`, `{"size": 1} x`, `{"allow_repeats": 1}`, `{"group_size": 1025}`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := ParseRequest(body, 64, 8)
		if err != nil {
			var re *RequestError
			if !errors.As(err, &re) || re.Msg == "" {
				t.Fatalf("error %v is not a RequestError", err)
			}
			return
		}
		if req.Size < 1 || req.Size > MaxSize || req.GroupSize < 1 || req.GroupSize > MaxGroupSize || (req.Step != nil && (*req.Step < 0 || *req.Step > record.MaxStep)) {
			t.Fatalf("out of bounds: %+v", req)
		}
		for _, e := range append(req.Envs, req.ExcludeEnvs...) {
			if e == "" {
				t.Fatalf("empty env name accepted: %+v", req)
			}
		}
	})
}

func TestStepOf(t *testing.T) {
	cases := map[string]int64{
		`{"id":"a","policy":"envsched/1","step":41,"tasks":[]}`:             41,
		`{"created_at":"x","envs":{"a":1},"id":"a","step":7,"tasks":[1,2]}`: 7,
	}
	for in, want := range cases {
		if got, ok := stepOf([]byte(in)); !ok || got != want {
			t.Errorf("%s: %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, bad := range []string{``, `[]`, `{"step":"x"}`, `{"id":"a"}`, `{"id":`} {
		if _, ok := stepOf([]byte(bad)); ok {
			t.Errorf("%s: found a step", bad)
		}
	}
}

// TestStepBounds: a step no training run reaches (2^63-1 erased all evidence, and the next
// default step overflowed to a negative one) is refused; a default step past the bound too.
func TestStepBounds(t *testing.T) {
	for body, ok := range map[string]bool{
		`{"step": 0}`: true, `{"step": 1000000000}`: true, `{"step": 1000000001}`: false,
		`{"step": 9223372036854775807}`: false, `{"step": -1}`: false,
	} {
		_, err := ParseRequest([]byte(body), 64, 8)
		if (err == nil) != ok {
			t.Errorf("%s: error %v; want accepted %v", body, err, ok)
		}
	}
	// A request without a step never fails and never overflows: the previous step + 1, held
	// within the bounds (an answer at MaxStep is followed by MaxStep again).
	for _, c := range []struct{ last, want int64 }{{0, 1}, {41, 42}, {record.MaxStep - 1, record.MaxStep},
		{record.MaxStep, record.MaxStep}, {record.MaxStep + 1, record.MaxStep}, {math.MaxInt64, record.MaxStep},
		{-5, 1}, {math.MinInt64, 1}} {
		if got := NextStep(c.last, nil); got != c.want {
			t.Errorf("after step %d: %d; want %d", c.last, got, c.want)
		}
	}
	if got := NextStep(math.MaxInt64, ptr(int64(7))); got != 7 {
		t.Errorf("a named step after a stored huge one: %d; want 7", got)
	}
}

func ptr[T any](v T) *T { return &v }

// TestNumKeepsHugeFinite: an answer's number is rounded to 6 decimals, a non-finite one is 0,
// and a finite one too large for decimals stays finite (rounding 1e308 gave +Inf, which JSON
// cannot hold: the answer failed to encode).
func TestNumKeepsHugeFinite(t *testing.T) {
	for x, want := range map[float64]float64{0.1234567: 0.123457, -2.5e-7: -0, 1e308: 1e308, -1e308: -1e308,
		math.Inf(1): 0, math.NaN(): 0, 1e15: 1e15} {
		if got := num(x); got != want || math.IsInf(got, 0) {
			t.Errorf("num(%g) = %g; want %g", x, got, want)
		}
	}
}

// TestDuplicateFieldRefused: a field given twice is refused (which value was meant cannot be
// known; json.Unmarshal kept the last silently), also when the second spells the key with an
// escape. Repeated values inside a field are the field's business.
func TestDuplicateFieldRefused(t *testing.T) {
	for body, refused := range map[string]bool{
		`{"size": 2, "size": 3}`:                      true,
		`{"size": 2, "s\u0069ze": 3}`:                 true,
		`{"envs": ["a"], "size": 2, "envs": ["b"]}`:   true,
		`{"seed": null, "seed": 4}`:                   true,
		`{"size": 2, "envs": ["a", "a"]}`:             false,
		`{"size": 2, "group_size": 2, "step": 2}`:     false,
		`{"envs": ["size", "size"], "size": 2}`:       false,
		`{"size": 2, "exclude_envs": [], "envs": []}`: true, // refused for envs being empty
	} {
		_, err := ParseRequest([]byte(body), 64, 8)
		if (err != nil) != refused {
			t.Errorf("%s: %v; want refused %v", body, err, refused)
		}
		if err != nil && refused && strings.Contains(body, `"size": 3`) && !strings.Contains(err.Error(), "twice") {
			t.Errorf("%s: %v; want a message saying the field is given twice", body, err)
		}
	}
}

// TestEnvNamesNotValidUTF8Refused: an environment name in envs or exclude_envs that is not
// valid UTF-8 (a raw byte, or an escape of a lone surrogate, which json.Unmarshal makes U+FFFD)
// is refused saying so: read as U+FFFD it matched no environment, or an environment named
// "\ufffd", not the one meant. Escapes that are valid (a surrogate pair, an escaped backslash)
// are names like any other.
func TestEnvNamesNotValidUTF8Refused(t *testing.T) {
	for body, refused := range map[string]bool{
		`{"envs": ["a\ud800"]}`:        true,
		`{"exclude_envs": ["\udcff"]}`: true,
		"{\"envs\": [\"a\xffb\"]}":     true,
		`{"envs": ["\ude00\ud83d"]}`:   true,
		`{"envs": ["\ud83d\ude00"]}`:   false,
		`{"envs": ["a\\ud800"]}`:       false,
		`{"envs": ["caf\u00e9", "b"]}`: false,
	} {
		_, err := ParseRequest([]byte(body), 64, 8)
		if (err != nil) != refused {
			t.Errorf("%s: %v; want refused %v", body, err, refused)
		}
		if err != nil && refused && !strings.Contains(err.Error(), "not valid UTF-8") {
			t.Errorf("%s: %v; want a message saying the name is not valid UTF-8", body, err)
		}
	}
}

// TestTrailingBytesNamed: what follows a request's object is quoted in the message (a NUL byte
// written by a C trainer was refused as "more than one JSON value", with nothing to see).
func TestTrailingBytesNamed(t *testing.T) {
	for body, want := range map[string]string{
		"{\"size\": 2}\x00":                           `"\x00"`,
		`{"size": 2} {"size": 3}`:                     `"{\"size\": 3}"`,
		"{\"size\": 2}\n x" + strings.Repeat("y", 40): `"xyyyyyyyyyyyyyyyyyyy"…`,
	} {
		_, err := ParseRequest([]byte(body), 64, 8)
		if err == nil || !strings.Contains(err.Error(), "more than one JSON value") || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want the message to quote %s", body, err, want)
		}
	}
}

// TestIntegralFloatFields: a JSON number with a fraction or an exponent whose value is an
// integer is that integer in every integer field (Python's float and JavaScript's numbers write
// 1.0 and 1e3; a rollout's step was taken so already), while a fraction, a value beyond the
// field's range or beyond 64 bits, and a seed float beyond 2^53 (where it names one of many
// integers) are refused.
func TestIntegralFloatFields(t *testing.T) {
	accepted := map[string]Request{
		`{"size": 2.0}`:                {Size: 2, GroupSize: 8},
		`{"size": 2e0}`:                {Size: 2, GroupSize: 8},
		`{"size": 20E-1}`:              {Size: 2, GroupSize: 8},
		`{"group_size": 16.000}`:       {Size: 64, GroupSize: 16},
		`{"step": 1.0}`:                {Size: 64, GroupSize: 8, Step: ptr(int64(1))},
		`{"step": 4.1e1}`:              {Size: 64, GroupSize: 8, Step: ptr(int64(41))},
		`{"step": -0.0}`:               {Size: 64, GroupSize: 8, Step: ptr(int64(0))},
		`{"step": 1e9}`:                {Size: 64, GroupSize: 8, Step: ptr(int64(1e9))},
		`{"seed": 7.0}`:                {Size: 64, GroupSize: 8, Seed: ptr(uint64(7))},
		`{"seed": -1.0}`:               {Size: 64, GroupSize: 8, Seed: ptr(uint64(1<<64 - 1))},
		`{"seed": 9007199254740992.0}`: {Size: 64, GroupSize: 8, Seed: ptr(uint64(1 << 53))},
	}
	for body, want := range accepted {
		got, err := ParseRequest([]byte(body), 64, 8)
		if err != nil {
			t.Errorf("%s: %v; want accepted", body, err)
			continue
		}
		if got.Size != want.Size || got.GroupSize != want.GroupSize || !eqPtr(got.Step, want.Step) || !eqPtr(got.Seed, want.Seed) {
			t.Errorf("%s: %+v; want %+v", body, got, want)
		}
	}
	for _, body := range []string{`{"size": 1.5}`, `{"size": 0.0}`, `{"size": 1e400}`, `{"size": 100001.0}`,
		`{"step": 1.5}`, `{"step": -1.0}`, `{"step": 1e10}`, `{"step": 1e19}`, `{"step": "1"}`, `{"group_size": 2.5e0}`,
		`{"seed": 0.5}`, `{"seed": 1.8446744073709552e19}`, `{"seed": 1e300}`, `{"size": -0.5}`} {
		_, err := ParseRequest([]byte(body), 64, 8)
		var re *RequestError
		if !errors.As(err, &re) || !strings.Contains(re.Msg, "want") {
			t.Errorf("%s: %v; want refused saying what is wanted", body, err)
		}
	}
}

func eqPtr[T comparable](a, b *T) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// TestNotObjectSaysWhatItIs: a body that is not an object is refused saying what it is in JSON's
// words ("it is a JSON array"), or that it ends early (a write in progress, cut short); the
// message named Go types ("cannot unmarshal array into Go value of type
// map[string]json.RawMessage").
func TestNotObjectSaysWhatItIs(t *testing.T) {
	for body, want := range map[string]string{
		`[{"size": 2}]`: "it is a JSON array",
		`"size"`:        "it is a JSON string",
		`5`:             "it is a JSON number",
		`true`:          "it is a JSON bool",
		`null`:          "it is null",
		`{"size": `:     "it ends before the object does",
		`{"size": 2`:    "it ends before the object does",
	} {
		_, err := ParseRequest([]byte(body), 64, 8)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "Go value") {
			t.Errorf("%s: %v; want a message with %q", body, err, want)
		}
	}
}
