package record

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/valyala/fastjson"
)

// envTask reads the two required fields of every record.
func envTask(f *fields) (env, task string, err error) {
	v := f.first(envKeys...)
	if v == nil {
		return "", "", &BadLineError{Reason: ReasonMissingEnv}
	}
	if v.Type() != fastjson.TypeString {
		return "", "", &BadLineError{Reason: ReasonBadEnv}
	}
	if env, err = name(v, ReasonEmptyEnv, ReasonEnvUTF8); err != nil {
		return "", "", err
	}
	v = f.first(taskKeys...)
	switch {
	case v == nil:
		return "", "", &BadLineError{Reason: ReasonMissingTask}
	case v.Type() == fastjson.TypeString:
		task, err = name(v, ReasonEmptyTask, ReasonTaskUTF8)
	case v.Type() == fastjson.TypeNumber:
		var ok bool
		if task, ok = numberText(raw(v)); !ok {
			err = &BadLineError{Reason: ReasonBadTask}
		}
	default:
		err = &BadLineError{Reason: ReasonBadTask}
	}
	return env, task, err
}

// name returns the non-empty, valid UTF-8 string value v.
func name(v *fastjson.Value, empty, badUTF8 string) (string, error) {
	b := v.GetStringBytes()
	if len(b) == 0 {
		return "", &BadLineError{Reason: empty}
	}
	if !utf8.Valid(b) {
		return "", &BadLineError{Reason: badUTF8}
	}
	return string(b), nil
}

// reward reads reward or score: a finite number, or a boolean (true = 1).
func reward(f *fields) (float64, error) {
	v := f.first(kReward, kScore)
	if v == nil {
		return 0, &BadLineError{Reason: ReasonMissingReward}
	}
	switch v.Type() {
	case fastjson.TypeTrue:
		return 1, nil
	case fastjson.TypeFalse:
		return 0, nil
	case fastjson.TypeNumber:
	default:
		return 0, &BadLineError{Reason: ReasonBadReward}
	}
	s := raw(v)
	if !isJSONNumber(s) {
		return 0, &BadLineError{Reason: ReasonInvalidJSON}
	}
	x, _ := strconv.ParseFloat(s, 64) // well-formed: only ErrRange, with x = ±Inf or a tiny 0
	if math.IsInf(x, 0) {
		return 0, &BadLineError{Reason: ReasonNonFiniteReward}
	}
	return x, nil
}

// integer reads an integral number that fits an int64 (5, 5.0, 5e0); anything else is absent.
func integer(v *fastjson.Value) (int64, bool) {
	if v == nil || v.Type() != fastjson.TypeNumber || !isJSONNumber(raw(v)) {
		return 0, false
	}
	s := raw(v)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || x != math.Trunc(x) || x < -(1<<63) || x >= 1<<63 {
		return 0, false
	}
	return int64(x), true
}

// group reads group_id, uid or group_index. A verl V1 uid PROMPT_SESSION_INDEX (two trailing
// "_digits" segments after a non-empty prefix) counts as PROMPT, so that every rollout of one
// prompt shares a group whatever its session and index.
func group(f *fields) string {
	v := f.first(kGroupID, kUID, kGroupIndex)
	if v != nil && v == f[kUID] {
		return uidPrompt(optionalID(v))
	}
	return optionalID(v)
}

// uidPrompt strips the _SESSION_INDEX suffix of a verl V1 uid.
func uidPrompt(uid string) string {
	s, ok := cutDigits(uid)
	if !ok {
		return uid
	}
	if s, ok = cutDigits(s); !ok || s == "" {
		return uid
	}
	return s
}

// cutDigits removes a trailing "_" followed by one or more ASCII digits.
func cutDigits(s string) (string, bool) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	if i == len(s) || i == 0 || s[i-1] != '_' {
		return s, false
	}
	return s[:i-1], true
}

// optionalID reads an optional id: a non-empty valid UTF-8 string, or a number as numberText.
// Anything else is absent ("").
func optionalID(v *fastjson.Value) string {
	if v == nil {
		return ""
	}
	switch v.Type() {
	case fastjson.TypeString:
		if b := v.GetStringBytes(); utf8.Valid(b) {
			return string(b)
		}
	case fastjson.TypeNumber:
		s, _ := numberText(raw(v))
		return s
	}
	return ""
}

// numberText turns a JSON number into the decimal string that names it. An integer literal keeps
// its digits exactly, whatever its size ("-0" becomes "0"). A number with a fraction or an
// exponent is read as a float64: an integral value below 1e21 is written without fraction or
// exponent (3.0 and 3e0 -> "3"), any other as Go's shortest 'g' form (2.5 -> "2.5", 1e21 ->
// "1e+21"). Malformed and infinite numbers (1e999) give false.
func numberText(s string) (string, bool) {
	if !isJSONNumber(s) {
		return "", false
	}
	if !strings.ContainsAny(s, ".eE") {
		if s == "-0" {
			return "0", true
		}
		return s, true
	}
	x, _ := strconv.ParseFloat(s, 64)
	switch {
	case math.IsInf(x, 0):
		return "", false
	case x == 0:
		return "0", true
	case x == math.Trunc(x) && math.Abs(x) < 1e21:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	}
	return strconv.FormatFloat(x, 'g', -1, 64), true
}

// raw returns the text of a number value as it stands in the line.
func raw(v *fastjson.Value) string {
	var buf [32]byte
	return string(v.MarshalTo(buf[:0]))
}

// isJSONNumber reports whether s is a number by RFC 8259's grammar (fastjson itself also takes
// forms such as "+1", "1.", "NaN" and "inf").
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(s, i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		if j := digits(s, i+1); j > i+1 {
			i = j
		} else {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(s, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}

func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// maxTextDepth bounds the nesting that text follows (turns of messages of content parts).
const maxTextDepth = 4

// text joins the text of v: a string; a list (of messages, turns or content parts) whose
// elements' texts are joined with "\n", empty ones skipped; or an object, read as its content,
// or else its text. Invalid UTF-8 becomes U+FFFD.
func text(v *fastjson.Value) string {
	if v == nil {
		return ""
	}
	var b strings.Builder
	textOf(&b, v, 0)
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}

func textOf(b *strings.Builder, v *fastjson.Value, depth int) {
	switch v.Type() {
	case fastjson.TypeString:
		s := v.GetStringBytes()
		if len(s) > 0 && b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.Write(s)
	case fastjson.TypeArray:
		if depth < maxTextDepth {
			for _, e := range v.GetArray() {
				textOf(b, e, depth+1)
			}
		}
	case fastjson.TypeObject:
		if depth < maxTextDepth {
			textOfObject(b, v, depth)
		}
	}
}

func textOfObject(b *strings.Builder, v *fastjson.Value, depth int) {
	o := v.GetObject()
	if c := last(o, "content"); c != nil {
		textOf(b, c, depth+1)
	} else if t := last(o, "text"); t != nil && t.Type() == fastjson.TypeString {
		textOf(b, t, depth+1)
	}
}

// tools reads a list of tool names: strings, or objects with a string name (or with a function
// object that has one, as in OpenAI's tool schema).
func tools(v *fastjson.Value) []string {
	if v == nil || v.Type() != fastjson.TypeArray {
		return nil
	}
	var out []string
	for _, e := range v.GetArray() {
		if e.Type() == fastjson.TypeObject {
			o := e.GetObject()
			if e = last(o, "name"); e == nil {
				if fn := last(o, "function"); fn != nil && fn.Type() == fastjson.TypeObject {
					e = last(fn.GetObject(), "name")
				}
			}
		}
		if s, ok := str(e); ok {
			out = append(out, s)
		}
	}
	return out
}

// strs reads a list of strings, skipping elements that are not non-empty strings.
func strs(v *fastjson.Value) []string {
	if v == nil || v.Type() != fastjson.TypeArray {
		return nil
	}
	var out []string
	for _, e := range v.GetArray() {
		if s, ok := str(e); ok {
			out = append(out, s)
		}
	}
	return out
}

// str returns v as a non-empty string, invalid UTF-8 replaced by U+FFFD.
func str(v *fastjson.Value) (string, bool) {
	if v == nil || v.Type() != fastjson.TypeString || len(v.GetStringBytes()) == 0 {
		return "", false
	}
	return strings.ToValidUTF8(string(v.GetStringBytes()), "\uFFFD"), true
}

// embedding reads a non-empty list of numbers that all fit a float32; anything else is absent.
func embedding(v *fastjson.Value) []float32 {
	if v == nil || v.Type() != fastjson.TypeArray || len(v.GetArray()) == 0 {
		return nil
	}
	a := v.GetArray()
	out := make([]float32, len(a))
	for i, e := range a {
		if e.Type() != fastjson.TypeNumber || !isJSONNumber(raw(e)) {
			return nil
		}
		x, err := strconv.ParseFloat(raw(e), 32)
		if err != nil && math.IsInf(x, 0) {
			return nil
		}
		out[i] = float32(x)
	}
	return out
}

// last returns the value of the last occurrence of key in o, or nil when absent or null.
func last(o *fastjson.Object, key string) *fastjson.Value {
	var found *fastjson.Value
	o.Visit(func(k []byte, v *fastjson.Value) {
		if string(k) == key {
			found = v
		}
	})
	if found != nil && found.Type() == fastjson.TypeNull {
		return nil
	}
	return found
}
