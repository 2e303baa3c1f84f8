package schedule

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// onePassBodies are request bodies of every shape decodeObject meets: objects with fields,
// other keys, keys twice (also through escapes), values of every kind and spacing, and bodies
// that are no object or break off anywhere.
var onePassBodies = []string{
	"", " ", "{}", "{ }", `{"size": 8}`, `{"size":8,"group_size":4}`, "{\n\t\"size\" :\t8 ,\r\n\"seed\": -5 }",
	`{"size": 2, "size": 3}`, `{"s\u0069ze": 2, "size": 3}`, `{"id": 1, "id": 2}`, `{"id": 1, "id": 2, "step": 1, "step": 1}`,
	`{"envs": ["a", "b"], "exclude_envs": [], "allow_repeats": true, "x": {"y": [1, {"z": null}]}}`,
	`{"size": 1e3, "step": -0.0, "seed": 18446744073709551616, "a": "\ud800", "b": "\xff", "\xfe": 1}`,
	`{"size": 2} x`, `{"size": 2}}`, `{"size": 2}]`, "{\"size\": 2}\x00", `{"size": 2} {"size": 3}`, `{"size": 2},`,
	`[1]`, `null`, `true`, `"x"`, `12`, `{"size": 2,}`, `{"size" 2}`, `{"size": }`, `{size: 2}`, `{"size": 2`,
	`{"a": [[[[[[`, `{"a": 1, "a": [1,}`, `{"size": 2, "size": 3} x`, "\xef\xbb\xbf{}", `{"a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
	`{"a": "` + strings.Repeat("x", 5000) + `"}`, `{"size": NaN}`, `{"size": 01}`, `{"size": -}`, `{"": 1, "": 2}`,
}

// TestOnePassReadsAsTwo: decodeObject's one pass gives what the two passes (json's decode of
// the object, then the scan for a field given twice) gave, member for member and message for
// message, on every body above and on random cuts and byte changes of them.
func TestOnePassReadsAsTwo(t *testing.T) {
	check := func(body string) {
		t.Helper()
		got, gotErr := decodeObject([]byte(body))
		want, wantErr := readObject([]byte(body))
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() || !reflect.DeepEqual(got, want) {
			t.Fatalf("body %q: one pass %v, %v; two passes %v, %v", body, got, gotErr, want, wantErr)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, body := range onePassBodies {
		check(body)
		for range 300 {
			b := []byte(body)
			if len(b) > 0 && rng.IntN(2) == 0 {
				b = b[:rng.IntN(len(b))]
			}
			for range 1 + rng.IntN(3) {
				if len(b) > 0 {
					const alphabet = "{}[]\",: \x00a1e-.\\"
					b[rng.IntN(len(b))] = alphabet[rng.IntN(len(alphabet))]
				}
			}
			check(string(b))
		}
	}
}

// FuzzOnePassReadsAsTwo is TestOnePassReadsAsTwo on any body.
func FuzzOnePassReadsAsTwo(f *testing.F) {
	for _, b := range onePassBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, gotErr := decodeObject(body)
		want, wantErr := readObject(body)
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() || !reflect.DeepEqual(got, want) {
			t.Fatalf("body %q: one pass %v, %v; two passes %v, %v", body, got, gotErr, want, wantErr)
		}
	})
}
