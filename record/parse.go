package record

import (
	"bytes"
	"unicode/utf8"

	"github.com/valyala/fastjson"
)

// Reasons of a *BadLineError. They are stable: the quarantine stores them and tests compare them.
const (
	ReasonTooLong     = "line too long"
	ReasonEmpty       = "empty line"
	ReasonInvalidJSON = "invalid JSON"
	ReasonTooDeep     = "nested deeper than 512 levels"
	ReasonNotObject   = "not a JSON object"

	ReasonMissingEnv  = "missing env"
	ReasonBadEnv      = "env not a string"
	ReasonEmptyEnv    = "empty env"
	ReasonEnvUTF8     = "env not valid UTF-8"
	ReasonEnvNUL      = "env contains a NUL character"
	ReasonMissingTask = "missing task"
	ReasonBadTask     = "task not a string or number"
	ReasonEmptyTask   = "empty task"
	ReasonTaskUTF8    = "task not valid UTF-8"
	ReasonTaskNUL     = "task contains a NUL character"

	ReasonMissingReward   = "missing reward"
	ReasonBadReward       = "reward not a number"
	ReasonNonFiniteReward = "reward not finite"

	ReasonStepRange = "step out of range (an integer from 0 to 1000000000)"

	ReasonGroupTooLong = "group id too long (more than 4096 bytes)"
)

// MaxGroupLen is the longest group key (group_id, uid or group_index, as read) envsched
// accepts: the database keys its groups by it, and a key has a bounded length (bbolt's 32 KiB).
const MaxGroupLen = 4096

// MaxStep is the largest training step envsched accepts, in rollout lines and in requests: a
// step a second for 31 years. A larger step (such as 2^63-1) is no step a training run reaches;
// taken at its word it would decay all evidence away for good, and the step after it would
// overflow.
const MaxStep = 1_000_000_000

// parsers holds fastjson parsers for the lists of a task; a parser and every value it returned
// belong to one call of doc.tree at a time.
var parsers fastjson.ParserPool

// ParseRollout reads one rollout line (PROTOCOL.md, section 4 "Rollouts"). A trailing "\n" or "\r\n"
// and a leading UTF-8 byte order mark are allowed. Every fault that must quarantine the line is
// a *BadLineError; no other error is returned.
//
// The strings of the Rollout share one allocation. Key semantics, shared with ParseTask:
//   - Each field is taken from the first of its keys present, in the order of PROTOCOL.md. A key
//     whose value is null counts as absent.
//   - When a key occurs more than once in an object, the last occurrence counts (as in Python's
//     json.loads and Go's encoding/json).
//   - A required field (env, task, reward) whose value has the wrong type is a bad line; an
//     optional field (group, step, request_id, rollout_id) whose value has the wrong type, or is
//     an empty string, is absent: the protocol quarantines only for the required fields and for
//     a step that is an integer outside 0 to MaxStep (ReasonStepRange). A read
//     string that is not valid JSON (a malformed escape, a raw control character) is invalid JSON
//     wherever it is.
//   - Task ids, group ids and rollout ids that are JSON numbers become decimal strings (see
//     numberText): 17 -> "17", 3.0 -> "3", 2.5 -> "2.5", integers of any size digit for digit.
//
// The whole line must be well-formed JSON in its structure (scan.go says what is checked); the
// strings of keys that are not read are not checked inside (escapes, control characters, UTF-8),
// which keeps verl lines with kilobytes of text cheap.
func ParseRollout(line []byte) (Rollout, error) {
	var d doc
	if err := d.scan(line); err != nil {
		return Rollout{}, err
	}
	env, task, err := d.envTask()
	if err != nil {
		return Rollout{}, err
	}
	var r Rollout
	if r.Reward, err = d.reward(); err != nil {
		return Rollout{}, err
	}
	if r.Step, r.HasStep, err = d.step(); err != nil {
		return Rollout{}, err
	}
	b := [5][]byte{env, task} // then group, request, rollout
	if b[2], err = d.group(); err != nil {
		return Rollout{}, err
	}
	if b[3], err = d.optionalID(d.f[kRequestID]); err != nil {
		return Rollout{}, err
	}
	if b[4], err = d.optionalID(d.f[kRolloutID]); err != nil {
		return Rollout{}, err
	}
	s := pack(b)
	r.Env, r.Task, r.Group, r.RequestID, r.RolloutID = s[0], s[1], s[2], s[3], s[4]
	return r, nil
}

// RolloutLike reports whether line, found in a file that is named in both catalog/ and
// rollouts/ (hard links), makes that file a rollout file: it parses as a rollout (ParseRollout)
// and is not a catalogue row that carries a `score`. A line whose reward comes from `score`
// (not `reward`) and that has a task's description (text, description, instruction, question,
// prompt, tools, tags or embedding) but none of a rollout's own keys (group_id, uid,
// group_index, step, global_step, request_id, rollout_id, or the model's output: completion,
// response, output) is a catalogue row: catalogues carry scores (a difficulty, a pass rate), and
// a rollout dump carries a step (verl's) or what the model answered (a prompt/completion dump).
func RolloutLike(line []byte) bool {
	if _, err := ParseRollout(line); err != nil {
		return false
	}
	var d doc
	if err := d.scan(line); err != nil {
		return false
	}
	if d.f[kReward].kind != none {
		return true
	}
	for _, k := range []key{kGroupID, kUID, kGroupIndex, kStep, kGlobalStep, kRequestID, kRolloutID, kCompletion, kResponse, kOutput} {
		if d.f[k].kind != none {
			return true
		}
	}
	for _, k := range []key{kText, kDescription, kInstruction, kQuestion, kPrompt, kTools, kTags, kEmbedding} {
		if d.f[k].kind != none {
			return false
		}
	}
	return true
}

// ParseTask reads one catalogue line (PROTOCOL.md, section 3 "Catalogue") with the key semantics
// of ParseRollout. Text is a string, or a chat list whose contents are joined with "\n" (see
// textOf); invalid UTF-8 in it becomes U+FFFD. Tools, tags and embedding whose values have the
// wrong type are absent; list elements of the wrong type are skipped, except in an embedding,
// which is whole or absent (every element a number that fits a float32).
func ParseTask(line []byte) (Task, error) {
	var d doc
	if err := d.scan(line); err != nil {
		return Task{}, err
	}
	env, task, err := d.envTask()
	if err != nil {
		return Task{}, err
	}
	t := Task{Env: string(env), Task: string(task)}
	if t.Text, err = d.textField(d.f.first(kText, kDescription, kInstruction, kQuestion, kPrompt)); err != nil {
		return Task{}, err
	}
	d.lists(&t)
	return t, nil
}

// lists reads the tools, tags and embedding of a task.
func (d *doc) lists(t *Task) {
	if sp := d.f[kTools]; sp.kind == jArray {
		d.tree(sp, func(v *fastjson.Value) { t.Tools = tools(v) })
	}
	if sp := d.f[kTags]; sp.kind == jArray {
		d.tree(sp, func(v *fastjson.Value) { t.Tags = strs(v) })
	}
	if sp := d.f[kEmbedding]; sp.kind == jArray {
		d.tree(sp, func(v *fastjson.Value) { t.Embedding = embedding(v) })
	}
}

// IsBlank reports whether line holds only spaces, tabs, carriage returns, newlines and NUL
// bytes. Readers skip blank lines: they are neither records nor faults. NUL bytes are what a
// file system leaves where a crash (a power loss, not a killed process) cut an append short: the
// file's length moved on but its data did not reach the disk, so it reads back as zeros.
func IsBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != 0 {
			return false
		}
	}
	return true
}

// Head returns at most the first n bytes of line, cut so that no UTF-8 sequence that was valid in
// line is split (for the quarantine's first bytes). It shares line's memory.
func Head(line []byte, n int) []byte {
	if n <= 0 {
		return line[:0]
	}
	if len(line) <= n {
		return line
	}
	if utf8.RuneStart(line[n]) {
		return line[:n]
	}
	for i := n - 1; i >= 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(line[i]) {
			if r, size := utf8.DecodeRune(line[i:]); (r != utf8.RuneError || size > 1) && i+size > n {
				return line[:i] // the valid rune at i runs past n
			}
			break
		}
	}
	return line[:n]
}

var bom = []byte("\xef\xbb\xbf")

// scan checks line and finds the keys that are read.
func (d *doc) scan(line []byte) error {
	if len(line) > MaxLine {
		return &BadLineError{Reason: ReasonTooLong}
	}
	// Zeros before a line are a crash's unwritten bytes (see IsBlank): the line written after
	// the restart follows them without a newline between, and is read as if they were not there.
	line = bytes.TrimPrefix(bytes.TrimLeft(line, "\x00"), bom)
	if IsBlank(line) {
		return &BadLineError{Reason: ReasonEmpty}
	}
	d.s = line
	return scanner{line}.top(&d.f)
}
