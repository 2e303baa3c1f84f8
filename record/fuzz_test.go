package record

import (
	"errors"
	"math"
	"testing"
	"unicode/utf8"
)

// The seed corpora are in testdata/fuzz/; plain go test runs them. Explore further with
//
//	go test ./record -run '^$' -fuzz FuzzParseRollout -fuzztime 60s

func FuzzParseRollout(f *testing.F) {
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := ParseRollout(line)
		if !checkBad(t, line, err) {
			checkName(t, line, r.Env, r.Task)
			if math.IsNaN(r.Reward) || math.IsInf(r.Reward, 0) {
				t.Fatalf("line %q: reward %v", line, r.Reward)
			}
		}
		if refComparable(line, false) {
			want, wantBad := refRollout(line)
			agree(t, line, r, err, want, wantBad)
		}
		again, err2 := ParseRollout(append(line, '\n'))
		if (err == nil) != (err2 == nil) || err == nil && again != r {
			t.Fatalf("line %q: a trailing newline changes the result: %+v, %v then %+v, %v", line, r, err, again, err2)
		}
	})
}

func FuzzParseTask(f *testing.F) {
	f.Fuzz(func(t *testing.T, line []byte) {
		tk, err := ParseTask(line)
		if !checkBad(t, line, err) {
			checkName(t, line, tk.Env, tk.Task)
			if !utf8.ValidString(tk.Text) {
				t.Fatalf("line %q: text not valid UTF-8: %q", line, tk.Text)
			}
		}
		if refComparable(line, true) {
			want, wantBad := refTask(line)
			agree(t, line, tk, err, want, wantBad)
		}
	})
}

// checkBad fails unless err is nil or a *BadLineError with a reason; it reports whether err is
// not nil.
func checkBad(t *testing.T, line []byte, err error) bool {
	t.Helper()
	if err == nil {
		return false
	}
	var bad *BadLineError
	if !errors.As(err, &bad) || bad.Reason == "" {
		t.Fatalf("line %q: error %v is not a *BadLineError", line, err)
	}
	return true
}

func checkName(t *testing.T, line []byte, env, task string) {
	t.Helper()
	if env == "" || task == "" || !utf8.ValidString(env) || !utf8.ValidString(task) {
		t.Fatalf("line %q: env %q, task %q", line, env, task)
	}
}
