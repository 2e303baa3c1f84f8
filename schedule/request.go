package schedule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/envsched/envsched/record"
)

// The batch size and the group size: their defaults (when neither the request nor the
// configuration gives one) and bounds (PROTOCOL.md), for the whole program. The daemon's
// configuration, the scheduler's options, request validation and the command line all take them
// from here.
const (
	DefaultSize      = 64     // tasks in a batch
	DefaultGroupSize = 8      // rollouts the trainer runs per task
	MaxSize          = 100000 // sizes are 1 to MaxSize
	MaxGroupSize     = 1024   // group sizes are 1 to MaxGroupSize
)

// ValidSize reports whether n is a batch size within the bounds.
func ValidSize(n int) bool { return n >= 1 && n <= MaxSize }

// ValidGroupSize reports whether n is a group size within the bounds.
func ValidGroupSize(n int) bool { return n >= 1 && n <= MaxGroupSize }

// Request is a parsed and validated request body. Nil pointers are fields the body left out.
type Request struct {
	Size         int
	GroupSize    int
	Step         *int64
	Envs         []string
	ExcludeEnvs  []string
	AllowRepeats bool
	Seed         *uint64
	// Ignored are the body's top-level keys that are no request field and not a near miss of
	// one (see ParseRequest), sorted: a trainer's own bookkeeping, such as "id" or "comment".
	Ignored []string
}

// RequestError is a request that cannot be served as written; its message says what to change.
// The daemon writes it to DIR/batches/ID.error.json and goes on.
type RequestError struct{ Msg string }

// Error is the message, written for the trainer's operator.
func (e *RequestError) Error() string { return e.Msg }

// BadRequest marks the error as the requester's fault (see daemon.Answerer).
func (e *RequestError) BadRequest() bool { return true }

func badf(format string, args ...any) error { return &RequestError{Msg: fmt.Sprintf(format, args...)} }

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidID reports whether id is a valid request ID: [A-Za-z0-9][A-Za-z0-9._-]{0,127}, not
// ending in ".error" (so that no ID's batch file, ID.json, can be another ID's error file).
func ValidID(id string) bool { return idPattern.MatchString(id) && !strings.HasSuffix(id, ErrorSuffix) }

// ErrorSuffix is the end no request ID may have: ID.error.json is the error file of ID.
const ErrorSuffix = ".error"

// IDRule says what a valid request ID is, for messages.
const IDRule = "1 to 128 of A-Z a-z 0-9 . _ -, starting with a letter or digit, not ending in \".error\""

// SeedOf is the seed of a request that names none: the 64-bit FNV-1a hash of its ID.
func SeedOf(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}

// fields are the request fields, in the order PROTOCOL.md lists them.
var fields = []string{"size", "group_size", "step", "envs", "exclude_envs", "allow_repeats", "seed"}

// ParseRequest parses a request body. An empty body (or only white space) and {} take every
// default: size and groupSize are the defaults of size and group_size. A leading UTF-8 byte
// order mark is skipped (as in catalogue and rollout lines); a UTF-16 body is refused saying
// so. A key that is no field is ignored (Request.Ignored), as rollout lines' other keys are,
// unless it looks like a misspelled field (nearField: "grup_size", "Size", "batch_size"),
// which is refused: served with the defaults, a typo would pass unseen. Values of the wrong
// type or out of range, and anything but one JSON object, are RequestErrors too.
func ParseRequest(body []byte, size, groupSize int) (Request, error) {
	req := Request{Size: size, GroupSize: groupSize}
	body = bytes.TrimPrefix(body, utf8BOM)
	if bytes.HasPrefix(body, utf16LE) || bytes.HasPrefix(body, utf16BE) {
		return req, badf("the request is UTF-16 (it begins with a UTF-16 byte order mark): write it as UTF-8, " +
			"such as {\"size\": 64}")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return req, nil
	}
	raw, err := decodeObject(body)
	if err != nil {
		return req, err
	}
	for _, k := range sortedKeys(raw) {
		if !slices.Contains(fields, k) {
			if f, ok := nearField(k); ok {
				return req, badf("unknown field %s (did you mean %q?): the fields are %s", short(json.RawMessage(strconv.Quote(k))), f, strings.Join(fields, ", "))
			}
			req.Ignored = append(req.Ignored, k)
			continue
		}
		if err := req.set(k, raw[k]); err != nil {
			return req, err
		}
	}
	return req, nil
}

// nearField is the request field that key k looks like a misspelling of, if any, and the
// nearest such field when several are (the first one that passed a test named "size" for
// "see", "step" for "seen" and "envs" for "exclude_envs_list"). The key is folded first: case
// and separators ('-', ' ', '.' read as '_'), a lower-case letter or digit followed by a capital
// split by '_' ("groupSize" is group_size, "excludeEnvsList" exclude_envs_list). Then, in order:
//   - "id" or a name ending in "_id" ("step_id", "group_id", "requestId") is never a misspelling:
//     an identifier is the trainer's bookkeeping, ignored (and logged) as any other key;
//   - a field it equals;
//   - the field fewest edits away (insertions, deletions, substitutions, swaps of two
//     neighbouring letters), at most one edit for a key of four letters or fewer ("see",
//     "szie", "sise"; "time" and "name" are two from size, and ignored) and two for a longer one
//     ("steps", "grup_size"); of two as near, the longer;
//   - the field whose every word is among the key's words, in any order (tokenField:
//     "envs_to_exclude" is exclude_envs);
//   - the longest field the key holds, separators aside ("batch_size", "exclude_envs_list",
//     "my_exclude_envs": exclude_envs, not the envs it also holds);
//   - the shortest field that holds a key of three letters or more ("exclude", "group");
//   - the field sharing the longest start with it, three letters or more ("environments",
//     "exclude_environments").
func nearField(k string) (string, bool) {
	if len(k) > 4*maxNearKey {
		return "", false // folded, it is longer still than maxNearKey: a rune lower-cased shrinks 4 bytes to 1 at most
	}
	folded := foldKey(k)
	if len(folded) > maxNearKey {
		return "", false // a name this long is no typo of a field of at most 13 letters
	}
	if folded == "id" || strings.HasSuffix(folded, "_id") {
		return "", false
	}
	if slices.Contains(fields, folded) {
		return folded, true
	}
	limit := 2
	if len(folded) <= 4 {
		limit = 1
	}
	best, bestD := "", limit+1
	for _, f := range fields {
		if d, ok := editsWithin(folded, f, limit); ok && (d < bestD || (d == bestD && best != "" && len(f) > len(best))) {
			best, bestD = f, d
		}
	}
	if best != "" {
		return best, true
	}
	if f, ok := tokenField(folded); ok {
		return f, true
	}
	bare := strings.ReplaceAll(folded, "_", "")
	for i, f := range fields {
		if strings.Contains(bare, bareFields[i]) && len(f) > len(best) {
			best = f
		}
	}
	if best != "" {
		return best, true
	}
	if len(bare) >= 3 {
		for i, f := range fields {
			if strings.Contains(bareFields[i], bare) && (best == "" || len(f) < len(best)) {
				best = f
			}
		}
		if best != "" {
			return best, true
		}
	}
	bestN := 2
	for _, f := range fields {
		if n := commonPrefix(folded, f); n > bestN {
			best, bestN = f, n
		}
	}
	return best, best != ""
}

// tokenField is the field whose every word ('_'-separated) is among the words of the folded
// key, in any order, a word matching one it starts or that starts it with three letters or more
// ("envs_to_exclude", "env_exclude", "envs_excluded": exclude_envs, not the envs they hold too);
// of several, the one of most words, then the longer.
func tokenField(folded string) (string, bool) {
	words := strings.FieldsFunc(folded, func(r rune) bool { return r == '_' })
	best, bestN := "", 0
	for _, f := range fields {
		fw := strings.Split(f, "_")
		all := true
		for _, w := range fw {
			all = all && slices.ContainsFunc(words, func(k string) bool {
				return k == w || (min(len(k), len(w)) >= 3 && (strings.HasPrefix(k, w) || strings.HasPrefix(w, k)))
			})
		}
		if all && (len(fw) > bestN || (len(fw) == bestN && len(f) > len(best))) {
			best, bestN = f, len(fw)
		}
	}
	return best, best != ""
}

// foldKey is k in lower case with '-', ' ' and '.' read as '_', and '_' put between a
// lower-case letter or digit and the capital after it (camelCase to snake_case).
func foldKey(k string) string {
	var b strings.Builder
	prev := rune(0)
	for _, r := range k {
		switch {
		case r == '-' || r == ' ' || r == '.':
			r = '_'
		case unicode.IsUpper(r):
			if unicode.IsLower(prev) || unicode.IsDigit(prev) {
				b.WriteByte('_')
			}
		}
		prev = r
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// commonPrefix is the length of the longest common prefix of a and b, bytes.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// maxNearKey is the longest folded key nearField looks at, in bytes.
const maxNearKey = 64

// bareFields are the fields without their '_', indexed like fields.
var bareFields = func() []string {
	b := make([]string, len(fields))
	for i, f := range fields {
		b[i] = strings.ReplaceAll(f, "_", "")
	}
	return b
}()

// maxEdited is the longest string editDistance takes, in bytes: the longest field (13) and two
// edits more.
const maxEdited = 16

// editsWithin is editDistance(a, b) and true when it is at most limit, else false. b is a field;
// a differs from it in length by at most limit, or is not looked at (its distance is at least
// that difference), so the work is bounded whatever the key: a request of 20,000 keys that are
// no field computed 140,000 distances, each allocating its table (1 s).
func editsWithin(a, b string, limit int) (int, bool) {
	if abs(len(a)-len(b)) > limit || len(a) > maxEdited || len(b) > maxEdited {
		return 0, false
	}
	d := editDistance(a, b)
	return d, d <= limit
}

func abs(n int) int { return max(n, -n) }

// editDistance is the optimal string alignment distance of a and b, bytes: the fewest
// insertions, deletions, substitutions and swaps of two neighbouring bytes ("szie" is one from
// size). a and b are at most maxEdited bytes (its table is on the stack).
func editDistance(a, b string) int {
	var d [maxEdited + 1][maxEdited + 1]int
	for i := range len(a) + 1 {
		d[i][0] = i
	}
	for j := range len(b) + 1 {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			sub := d[i-1][j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			d[i][j] = min(sub, d[i-1][j]+1, d[i][j-1]+1)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// The byte order marks ParseRequest knows.
var (
	utf8BOM = []byte{0xef, 0xbb, 0xbf}
	utf16LE = []byte{0xff, 0xfe}
	utf16BE = []byte{0xfe, 0xff}
)

// decodeObject reads body as one JSON object, in one pass: its members (of a key given twice,
// the last value, as json.Unmarshal keeps), refusing a field given twice and anything after
// the object. A body that is no object, or does not parse, is read again by readObject for the
// message that says why (two passes, as every body took before: a body of many keys was read
// whole twice).
func decodeObject(body []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	raw, dup, ok := members(dec)
	if !ok {
		return readObject(body)
	}
	if dec.More() {
		return nil, badf("the request has more than one JSON value (after the object: %s): write one object such as "+
			"{\"size\": 64}", trailing(body[dec.InputOffset():]))
	}
	if dup != "" {
		return nil, badf("the request gives %q twice: give each field once", short(json.RawMessage(dup)))
	}
	return raw, nil
}

// members reads one JSON object from dec, token by token: its members, and the first field
// (one of fields) given twice, if any. ok is false when what dec holds is no whole object.
func members(dec *json.Decoder) (raw map[string]json.RawMessage, dup string, ok bool) {
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, "", false
	}
	raw = map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		k, isKey := t.(string)
		if err != nil || !isKey {
			return nil, "", false
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil, "", false
		}
		if _, twice := raw[k]; twice && dup == "" && slices.Contains(fields, k) {
			dup = k
		}
		raw[k] = v
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, "", false
	}
	return raw, dup, true
}

// readObject is decodeObject in two passes (json.Unmarshal's, then duplicateKey's), for the
// message of a body that is not one JSON object: json's error says where it breaks.
func readObject(body []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var raw map[string]json.RawMessage
	if err := dec.Decode(&raw); err != nil || raw == nil {
		return nil, badf("the request is not a JSON object (%s): write an object such as {\"size\": 64}, or nothing for every default", jsonProblem(err))
	}
	if dec.More() {
		return nil, badf("the request has more than one JSON value (after the object: %s): write one object such as "+
			"{\"size\": 64}", trailing(body[dec.InputOffset():]))
	}
	if k, ok := duplicateKey(body); ok {
		return nil, badf("the request gives %q twice: give each field once", short(json.RawMessage(k)))
	}
	return raw, nil
}

// duplicateKey finds a field (one of fields) given twice at the top level of body, a JSON
// object that decodes. A request is small and written by the trainer's own code, so a second
// value is a mistake: which of the two was meant cannot be known (json.Unmarshal would keep the
// last silently). A key that is no field given twice is not: it is ignored whatever its values,
// as it is given once (a misspelled field is refused anyway, by nearField).
func duplicateKey(body []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.Token() // the opening brace: body decoded as an object already
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		k, _ := t.(string)
		if err != nil {
			return "", false
		}
		if seen[k] && slices.Contains(fields, k) {
			return k, true
		}
		seen[k] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return "", false
		}
	}
	return "", false
}

// jsonProblem says in the trainer's words why a body is not an object: what JSON value it is
// (json's message named Go types: "cannot unmarshal array into Go value of type map[…]"), or
// where its syntax breaks.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return "it is null"
	case errors.As(err, &te):
		return "it is a JSON " + te.Value
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "it ends before the object does: a write in progress, or cut short"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// set parses one field; null leaves the default.
func (r *Request) set(k string, v json.RawMessage) error {
	if string(bytes.TrimSpace(v)) == "null" {
		return nil
	}
	var err error
	switch k {
	case "size":
		r.Size, err = intIn(k, v, 1, MaxSize)
	case "group_size":
		r.GroupSize, err = intIn(k, v, 1, MaxGroupSize)
	case "step":
		var s int64
		s, err = int64Field(k, v, fmt.Sprintf("an integer from 0 to %d", record.MaxStep))
		if err == nil && (s < 0 || s > record.MaxStep) {
			err = badf("step is %d: want an integer from 0 to %d, the training step of the batch (or leave "+
				"it out for the previous step + 1)", s, record.MaxStep)
		}
		r.Step = &s
	case "envs":
		r.Envs, err = envList(k, v)
	case "exclude_envs":
		r.ExcludeEnvs, err = envList(k, v)
	case "allow_repeats":
		if json.Unmarshal(v, &r.AllowRepeats) != nil {
			err = badf("allow_repeats is %s: want true or false", short(v))
		}
	case "seed":
		var s uint64
		s, err = seedField(v)
		r.Seed = &s
	}
	return err
}

func intIn(k string, v json.RawMessage, lo, hi int) (int, error) {
	want := fmt.Sprintf("an integer from %d to %d", lo, hi)
	n, err := int64Field(k, v, want)
	if err != nil {
		return 0, err
	}
	if n < int64(lo) || n > int64(hi) {
		return 0, badf("%s is %d: want %s", k, n, want)
	}
	return int(n), nil
}

// int64Field reads an integer field. A JSON number with a fraction or an exponent whose value
// is an integer (1.0, 1e3, as Python's float and JavaScript's numbers write them) is that
// integer, as a rollout's step is (PROTOCOL.md, section 5); a fraction (1.5), a value beyond
// 64 bits and anything but a number are refused.
func int64Field(k string, v json.RawMessage, want string) (int64, error) {
	s := string(bytes.TrimSpace(v))
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	if n, ok := integralFloat(s, false); ok {
		return n, nil
	}
	return 0, badf("%s is %s: want %s", k, short(v), want)
}

// integralFloat reads s, a JSON number with a fraction or an exponent, when its value is an
// integer whose magnitude is below 2^63, or at most 2^53 when exact is set.
func integralFloat(s string, exact bool) (int64, bool) {
	if !strings.ContainsAny(s, ".eE") || !json.Valid([]byte(s)) {
		return 0, false
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || x != math.Trunc(x) || math.Abs(x) >= 1<<63 || exact && math.Abs(x) > 1<<53 {
		return 0, false
	}
	return int64(x), true
}

// seedField accepts any integer that fits 64 bits, signed or not (a negative seed is taken
// by its two's complement bits).
func seedField(v json.RawMessage) (uint64, error) {
	s := string(bytes.TrimSpace(v))
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return u, nil
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return uint64(i), nil
	}
	// An integral float is taken only where every integer is exact in a float64 (2^53): beyond,
	// 1.8446744073709552e19 names one of many seeds, and which one the trainer meant is lost.
	if i, ok := integralFloat(s, true); ok {
		return uint64(i), nil
	}
	return 0, badf("seed is %s: want an integer (64 bits; written with a fraction or an exponent, at most 2^53), "+
		"or leave it out to derive it from the ID", short(v))
}

func envList(k string, v json.RawMessage) ([]string, error) {
	var names []string
	if err := json.Unmarshal(v, &names); err != nil {
		return nil, badf("%s is %s: want a list of environment names, such as [\"tau2-retail\"]", k, short(v))
	}
	if !utf8.Valid(v) || record.HasLoneSurrogate(v) {
		return nil, badf("%s holds a name that is not valid UTF-8 (a byte that is not, or an escape of a lone "+
			"surrogate such as \\udcff): no environment has such a name; write the names as the catalogue does", k)
	}
	if len(names) == 0 && k == "envs" {
		return nil, badf("envs is empty: list at least one environment, or leave it out for all")
	}
	for _, n := range names {
		if n == "" {
			return nil, badf("%s has an empty environment name", k)
		}
	}
	return names, nil
}

// trailing quotes the first bytes after a request's object, for a message: a NUL byte or a
// stray character is hard to see otherwise.
func trailing(rest []byte) string {
	rest = bytes.TrimLeft(rest, " \t\r\n")
	if len(rest) > 20 {
		return fmt.Sprintf("%q…", rest[:20])
	}
	return fmt.Sprintf("%q", rest)
}

// short is a JSON value for a message, cut to 40 bytes.
func short(v json.RawMessage) string {
	s := string(bytes.TrimSpace(v))
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}
