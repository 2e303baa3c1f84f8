package schedule

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
)

// The answer is written by hand, field by field, into the bytes encoding/json gives for it
// (json.Marshal: fields in order, map keys sorted, HTML-safe strings, floats in the shortest
// form with its exponent rules): json.Marshal went through reflection for each of an answer's
// 512 tasks. An answer it does not write the same way (a non-finite number, which json.Marshal
// refuses) is handed to json.Marshal, so that both the bytes and the errors stay its own.

// encodeAnswer is json.Marshal(a), byte for byte.
func encodeAnswer(a *Answer) ([]byte, error) {
	b := make([]byte, 0, 256+len(a.Tasks)*256)
	b, ok := a.appendJSON(b)
	if !ok {
		return json.Marshal(a)
	}
	return b, nil
}

// appendJSON appends a's encoding; false when a holds a number json.Marshal would refuse.
func (a *Answer) appendJSON(b []byte) ([]byte, bool) {
	ok := true
	b = append(b, `{"id":`...)
	b = appendJSONString(b, a.ID)
	b = append(b, `,"policy":`...)
	b = appendJSONString(b, a.Policy)
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, a.Step, 10)
	b = append(b, `,"created_at":`...)
	b = appendJSONString(b, a.CreatedAt)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, int64(a.Size), 10)
	b = append(b, `,"group_size":`...)
	b = strconv.AppendInt(b, int64(a.GroupSize), 10)
	b = append(b, `,"rollouts_seen":`...)
	b = strconv.AppendInt(b, a.RolloutsSeen, 10)
	b = append(b, `,"envs":`...)
	b = appendIntMap(b, a.Envs)
	b = append(b, `,"tasks":`...)
	if a.Tasks == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range a.Tasks {
			if i > 0 {
				b = append(b, ',')
			}
			var tok bool
			b, tok = a.Tasks[i].appendJSON(b)
			ok = ok && tok
		}
		b = append(b, ']')
	}
	b = append(b, `,"seed":`...)
	b = strconv.AppendUint(b, a.Seed, 10)
	b = append(b, `,"eligible":`...)
	b = strconv.AppendInt(b, int64(a.Eligible), 10)
	return append(b, '}'), ok
}

// appendJSON appends t's encoding; false when t holds a non-finite number.
func (t *Task) appendJSON(b []byte) ([]byte, bool) {
	b = append(b, `{"env":`...)
	b = appendJSONString(b, t.Env)
	b = append(b, `,"task_id":`...)
	b = appendJSONString(b, t.TaskID)
	b = append(b, `,"rank":`...)
	b = strconv.AppendInt(b, int64(t.Rank), 10)
	var f floats
	b = f.field(b, `,"score":`, t.Score)
	b = f.field(b, `,"predicted_mean":`, t.PredictedMean)
	b = f.field(b, `,"predicted_variance":`, t.PredictedVariance)
	b = f.field(b, `,"p_degenerate":`, t.PDegenerate)
	b = f.field(b, `,"exploit":`, t.Exploit)
	b = f.field(b, `,"coverage":`, t.Coverage)
	b = f.field(b, `,"penalty":`, t.Penalty)
	b = append(b, `,"reason":`...)
	b = appendJSONString(b, t.Reason)
	return append(b, '}'), !f.bad
}

// floats writes float64 fields as encoding/json does and remembers whether one was not
// finite (json.Marshal refuses those: the caller then lets it say so).
type floats struct{ bad bool }

func (f *floats) field(b []byte, name string, x float64) []byte {
	return f.append(append(b, name...), x)
}

// append appends x as encoding/json writes a float64: the shortest decimal that reads back
// as x, in exponent form below 1e-6 and from 1e21 on, with no leading zero in the exponent.
func (f *floats) append(b []byte, x float64) []byte {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		f.bad = true
		return append(b, '0')
	}
	abs, format := math.Abs(x), byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, x, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendIntMap appends a map of ints, its keys sorted; null for a nil map.
func appendIntMap(b []byte, m map[string]int) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = strconv.AppendInt(append(b, ':'), int64(m[k]), 10)
	}
	return append(b, '}')
}

// appendJSONString appends s quoted as json.Marshal quotes it. A string of printable ASCII
// without the characters encoding/json escapes (", \, <, >, &) is copied as it is; any other
// is encoded by encoding/json itself (its escapes of control characters, of invalid UTF-8 and
// of U+2028 and U+2029 are then its own).
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !plainJSON(s[i]) {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plainJSON reports whether json.Marshal writes byte c of a string as it is.
func plainJSON(c byte) bool {
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}
