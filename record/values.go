package record

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/valyala/fastjson"
)

// doc is a scanned line: its bytes and the spans of the keys that are read.
type doc struct {
	s []byte
	f fields
}

// raw returns the JSON text of the value at sp.
func (d *doc) raw(sp span) []byte { return d.s[sp.start:sp.end] }

// str returns the unescaped contents of the string at sp (sharing d.s when it has no escape);
// false when it has a malformed escape or a control character, which make the line invalid JSON.
func (d *doc) str(sp span) ([]byte, bool) {
	raw := d.s[sp.start+1 : sp.end-1]
	for _, c := range raw {
		if c < 0x20 {
			return nil, false
		}
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw, true
	}
	return unescape(raw)
}

// envTask reads the two required fields of every record. The bytes may share d.s.
func (d *doc) envTask() (env, task []byte, err error) {
	sp := d.f.first(envKeys...)
	switch sp.kind {
	case none:
		return nil, nil, &BadLineError{Reason: ReasonMissingEnv}
	case jString:
	default:
		return nil, nil, &BadLineError{Reason: ReasonBadEnv}
	}
	if env, err = d.name(sp, ReasonEmptyEnv, ReasonEnvUTF8, ReasonEnvNUL); err != nil {
		return nil, nil, err
	}
	switch sp = d.f.first(taskKeys...); sp.kind {
	case none:
		return nil, nil, &BadLineError{Reason: ReasonMissingTask}
	case jString:
		task, err = d.name(sp, ReasonEmptyTask, ReasonTaskUTF8, ReasonTaskNUL)
	case jNumber:
		var ok bool
		if task, ok = numberBytes(d.raw(sp)); !ok {
			err = &BadLineError{Reason: ReasonBadTask}
		}
	default:
		err = &BadLineError{Reason: ReasonBadTask}
	}
	return env, task, err
}

// name returns the non-empty, valid UTF-8 string without NUL at sp. The database joins an
// environment and a task with a NUL byte: a name holding one would make two tasks one
// ("a\x00b"/"c" and "a"/"b\x00c").
func (d *doc) name(sp span, empty, badUTF8, nul string) ([]byte, error) {
	b, ok := d.str(sp)
	switch {
	case !ok:
		return nil, &BadLineError{Reason: ReasonInvalidJSON}
	case len(b) == 0:
		return nil, &BadLineError{Reason: empty}
	case !utf8.Valid(b) || d.loneSurrogate(sp):
		return nil, &BadLineError{Reason: badUTF8}
	case bytes.IndexByte(b, 0) >= 0:
		return nil, &BadLineError{Reason: nul}
	}
	return b, nil
}

// reward reads reward or score: a finite number, or a boolean (true = 1).
func (d *doc) reward() (float64, error) {
	switch sp := d.f.first(kReward, kScore); sp.kind {
	case none:
		return 0, &BadLineError{Reason: ReasonMissingReward}
	case jTrue:
		return 1, nil
	case jFalse:
		return 0, nil
	case jNumber:
		x := parseFloat(d.raw(sp))
		if math.IsInf(x, 0) {
			return 0, &BadLineError{Reason: ReasonNonFiniteReward}
		}
		return x, nil
	}
	return 0, &BadLineError{Reason: ReasonBadReward}
}

// parseFloat reads a well-formed JSON number: ±Inf when it overflows, 0 when it underflows.
func parseFloat(b []byte) float64 {
	if n, ok := smallInt(b); ok {
		return float64(n)
	}
	// The string does not outlive the call: strconv copies what it keeps in an error.
	x, _ := strconv.ParseFloat(unsafe.String(unsafe.SliceData(b), len(b)), 64)
	return x
}

// smallInt reads an integer literal of at most 15 digits, exact in an int64 and a float64.
func smallInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// integer reads an integral number that fits an int64 (5, 5.0, 5e0); anything else is absent.
func (d *doc) integer(sp span) (int64, bool) {
	if sp.kind != jNumber {
		return 0, false
	}
	b := d.raw(sp)
	if n, ok := smallInt(b); ok {
		return n, true
	}
	s := string(b)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || x != math.Trunc(x) || x < -(1<<63) || x >= 1<<63 {
		return 0, false
	}
	return int64(x), true
}

// step reads step or global_step. An integer from 0 to MaxStep is the step; any other integral
// number (negative, too large, beyond 64 bits) is a bad line; a value of another type (a string,
// a fraction) is absent, as for every optional field.
func (d *doc) step() (int64, bool, error) {
	sp := d.f.first(kStep, kGlobalStep)
	n, ok := d.integer(sp)
	if ok && n >= 0 && n <= MaxStep {
		return n, true, nil
	}
	if ok || d.integral(sp) {
		return 0, false, &BadLineError{Reason: ReasonStepRange}
	}
	return 0, false, nil
}

// integral reports whether sp is a number with an integral value, of any size.
func (d *doc) integral(sp span) bool {
	if sp.kind != jNumber {
		return false
	}
	x, err := strconv.ParseFloat(string(d.raw(sp)), 64)
	return err == nil && x == math.Trunc(x) && !math.IsInf(x, 0) || errors.Is(err, strconv.ErrRange)
}

// group reads group_id, uid or group_index. A verl V1 uid PROMPT_SESSION_INDEX (two trailing
// "_digits" segments after a non-empty prefix) counts as PROMPT, so that every rollout of one
// prompt shares a group whatever its session and index.
// A group key longer than MaxGroupLen makes the line bad.
func (d *doc) group() ([]byte, error) {
	var g []byte
	var err error
	if d.f[kGroupID].kind == none && d.f[kUID].kind != none {
		g, err = d.optionalID(d.f[kUID])
		g = uidPrompt(g)
	} else {
		g, err = d.optionalID(d.f.first(kGroupID, kGroupIndex))
	}
	if err == nil && len(g) > MaxGroupLen {
		return nil, &BadLineError{Reason: ReasonGroupTooLong}
	}
	return g, err
}

// uidPrompt strips the _SESSION_INDEX suffix of a verl V1 uid.
func uidPrompt[S ~string | ~[]byte](uid S) S {
	s, ok := cutDigits(uid)
	if !ok {
		return uid
	}
	if s, ok = cutDigits(s); !ok || len(s) == 0 {
		return uid
	}
	return s
}

// cutDigits removes a trailing "_" followed by one or more ASCII digits.
func cutDigits[S ~string | ~[]byte](s S) (S, bool) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	if i == len(s) || i == 0 || s[i-1] != '_' {
		return s, false
	}
	return s[:i-1], true
}

// optionalID reads an optional id: a valid UTF-8 string, or a number as numberText. Anything
// else is absent (nil); a malformed string is an invalid line.
func (d *doc) optionalID(sp span) ([]byte, error) {
	switch sp.kind {
	case jString:
		b, ok := d.str(sp)
		if !ok {
			return nil, &BadLineError{Reason: ReasonInvalidJSON}
		}
		if utf8.Valid(b) && !d.loneSurrogate(sp) {
			return b, nil
		}
	case jNumber:
		b, _ := numberBytes(d.raw(sp))
		return b, nil
	}
	return nil, nil
}

// numberBytes is numberText on bytes; an integer literal comes back as itself.
func numberBytes(b []byte) ([]byte, bool) {
	if bytes.IndexAny(b, ".eE") < 0 && !(len(b) == 2 && b[0] == '-' && b[1] == '0') {
		return b, true
	}
	s, ok := numberText(string(b))
	return []byte(s), ok
}

// pack turns five byte strings into strings with one allocation, which they share.
func pack(b [5][]byte) (out [5]string) {
	n := 0
	for _, p := range b {
		n += len(p)
	}
	var sb strings.Builder
	sb.Grow(n)
	for _, p := range b {
		sb.Write(p)
	}
	all := sb.String()
	for i, p := range b {
		out[i], all = all[:len(p)], all[len(p):]
	}
	return out
}

// numberText turns a JSON number into the decimal string that names it. An integer literal keeps
// its digits exactly, whatever its size ("-0" becomes "0"). A number with a fraction or an
// exponent is read as a float64: an integral value below 1e21 is written without fraction or
// exponent (3.0 and 3e0 -> "3"), any other as Go's shortest 'g' form (2.5 -> "2.5", 1e21 ->
// "1e+21"). Infinite numbers (1e999) give false. s must be a well-formed JSON number.
func numberText(s string) (string, bool) {
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
		if e.Type() != fastjson.TypeNumber {
			return nil
		}
		var buf [32]byte
		x, err := strconv.ParseFloat(string(e.MarshalTo(buf[:0])), 32) // well-formed: the scanner checked it
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

// textField reads the text at sp: a string, or a list or object as text describes.
func (d *doc) textField(sp span) (string, error) {
	switch sp.kind {
	case jString:
		b, ok := d.str(sp)
		if !ok {
			return "", &BadLineError{Reason: ReasonInvalidJSON}
		}
		return strings.ToValidUTF8(string(b), "\uFFFD"), nil
	case jArray, jObject:
		var t string
		d.tree(sp, func(v *fastjson.Value) { t = text(v) })
		return t, nil
	}
	return "", nil
}

// tree parses the list or object at sp with fastjson and hands it to use, whose results must not
// keep the value (the parser is reused).
func (d *doc) tree(sp span, use func(*fastjson.Value)) {
	p := parsers.Get()
	defer parsers.Put(p)
	if v, err := p.ParseBytes(d.raw(sp)); err == nil { // the scanner checked it: no error expected
		use(v)
	}
}

// loneSurrogate reports whether the string at sp holds a \u escape of a surrogate that is not
// half of a pair (Python's json.dumps writes "\udcff" for a byte it could not decode). unescape
// makes it U+FFFD, as encoding/json does, so "\udcff" and "\udcfe" would be one name: names
// and ids holding one are taken as not valid UTF-8.
func (d *doc) loneSurrogate(sp span) bool { return HasLoneSurrogate(d.s[sp.start+1 : sp.end-1]) }

// HasLoneSurrogate reports whether the JSON text raw (a string's contents, or whole values:
// outside strings JSON has no backslash) holds a \u escape of a lone surrogate, which no name
// or id may hold (PROTOCOL.md, section 3).
func HasLoneSurrogate(raw []byte) bool {
	for i := bytes.IndexByte(raw, '\\'); i >= 0 && i+1 < len(raw); {
		if raw[i+1] != 'u' {
			i = nextEscape(raw, i+2)
			continue
		}
		r, ok := hex4(raw[i+2:])
		if !ok {
			return false // malformed: str refuses the string
		}
		i += 6
		if !utf16.IsSurrogate(r) {
			i = nextEscape(raw, i)
			continue
		}
		r2, ok := rune(0), false
		if i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
			r2, ok = hex4(raw[i+2:])
		}
		if !ok || utf16.DecodeRune(r, r2) == utf8.RuneError {
			return true
		}
		i = nextEscape(raw, i+6)
	}
	return false
}

// nextEscape is the index of the first backslash in raw at or after i, or -1.
func nextEscape(raw []byte, i int) int {
	if i >= len(raw) {
		return -1
	}
	if j := bytes.IndexByte(raw[i:], '\\'); j >= 0 {
		return i + j
	}
	return -1
}

// unescape decodes the escapes of a JSON string's contents as encoding/json does: a lone
// surrogate becomes U+FFFD. False when an escape is malformed.
func unescape(raw []byte) ([]byte, bool) {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(raw) {
			return nil, false
		}
		if e := simpleEscape(raw[i+1]); e != 0 {
			out = append(out, e)
			i += 2
			continue
		}
		if raw[i+1] != 'u' {
			return nil, false
		}
		r, ok := hex4(raw[i+2:])
		if !ok {
			return nil, false
		}
		i += 6
		if utf16.IsSurrogate(r) {
			r2, ok := rune(0), false
			if i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
				r2, ok = hex4(raw[i+2:])
			}
			if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
				r = dec
				i += 6
			} else {
				r = utf8.RuneError
			}
		}
		out = utf8.AppendRune(out, r)
	}
	return out, true
}

// simpleEscape returns the byte that \c stands for, or 0 when c is 'u' or no escape.
func simpleEscape(c byte) byte {
	switch c {
	case '"', '\\', '/':
		return c
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return 0
}

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
