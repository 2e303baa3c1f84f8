package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The reference decoder: encoding/json into map[string]any, then PROTOCOL.md's rules written
// plainly. The fast path must agree with it on every line that encoding/json accepts.

func refDecode(line []byte) (map[string]any, *BadLineError) {
	line = bytes.TrimPrefix(line, bom)
	if IsBlank(line) {
		return nil, &BadLineError{Reason: ReasonEmpty}
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &BadLineError{Reason: ReasonInvalidJSON}
	}
	if _, err := dec.Token(); err == nil {
		return nil, &BadLineError{Reason: ReasonInvalidJSON} // a second value follows
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &BadLineError{Reason: ReasonNotObject}
	}
	return m, nil
}

// refGet returns the value of a key path ("extra_info.index"), nil when absent or null.
func refGet(m map[string]any, path string) any {
	if outer, inner, ok := strings.Cut(path, "."); ok {
		sub, _ := m[outer].(map[string]any)
		return sub[inner]
	}
	return m[path]
}

func refFirst(m map[string]any, paths ...string) any {
	for _, p := range paths {
		if v := refGet(m, p); v != nil {
			return v
		}
	}
	return nil
}

var (
	refEnvKeys  = []string{"env", "data_source", "env_class", "environment", "task_name", "tag", "domain", "extra_info.data_source"}
	refTaskKeys = []string{"task_id", "task", "extra_info.task_id", "index", "extra_info.index", "item_id", "id"}
)

func refNumberText(n json.Number) (string, bool) {
	s := n.String()
	if !strings.ContainsAny(s, ".eE") {
		if s == "-0" {
			return "0", true
		}
		return s, true
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil && math.IsInf(x, 0) {
		return "", false
	}
	if x == 0 {
		return "0", true
	}
	if x == math.Trunc(x) && math.Abs(x) < 1e21 {
		return strconv.FormatFloat(x, 'f', -1, 64), true
	}
	return strconv.FormatFloat(x, 'g', -1, 64), true
}

func refEnvTask(m map[string]any) (string, string, *BadLineError) {
	var env, task string
	switch v := refFirst(m, refEnvKeys...).(type) {
	case nil:
		return "", "", &BadLineError{Reason: ReasonMissingEnv}
	case string:
		if v == "" {
			return "", "", &BadLineError{Reason: ReasonEmptyEnv}
		}
		env = v
	default:
		return "", "", &BadLineError{Reason: ReasonBadEnv}
	}
	switch v := refFirst(m, refTaskKeys...).(type) {
	case nil:
		return "", "", &BadLineError{Reason: ReasonMissingTask}
	case string:
		if v == "" {
			return "", "", &BadLineError{Reason: ReasonEmptyTask}
		}
		task = v
	case json.Number:
		s, ok := refNumberText(v)
		if !ok {
			return "", "", &BadLineError{Reason: ReasonBadTask}
		}
		task = s
	default:
		return "", "", &BadLineError{Reason: ReasonBadTask}
	}
	return env, task, nil
}

func refID(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		s, _ := refNumberText(v)
		return s
	}
	return ""
}

func refRollout(line []byte) (Rollout, *BadLineError) {
	m, bad := refDecode(line)
	if bad != nil {
		return Rollout{}, bad
	}
	var r Rollout
	if r.Env, r.Task, bad = refEnvTask(m); bad != nil {
		return Rollout{}, bad
	}
	switch v := refFirst(m, "reward", "score").(type) {
	case nil:
		return Rollout{}, &BadLineError{Reason: ReasonMissingReward}
	case bool:
		if v {
			r.Reward = 1
		}
	case json.Number:
		x, err := strconv.ParseFloat(v.String(), 64)
		if err != nil && math.IsInf(x, 0) {
			return Rollout{}, &BadLineError{Reason: ReasonNonFiniteReward}
		}
		r.Reward = x
	default:
		return Rollout{}, &BadLineError{Reason: ReasonBadReward}
	}
	if n, ok := refFirst(m, "step", "global_step").(json.Number); ok {
		// an integral value from 0 to MaxStep is the step; any other integral value is a bad
		// line; a fraction is absent
		x, err := strconv.ParseFloat(n.String(), 64)
		integral := err == nil && x == math.Trunc(x) || errors.Is(err, strconv.ErrRange)
		switch i, ierr := strconv.ParseInt(n.String(), 10, 64); {
		case ierr == nil && i >= 0 && i <= MaxStep:
			r.Step, r.HasStep = i, true
		case ierr == nil:
			return Rollout{}, &BadLineError{Reason: ReasonStepRange}
		case integral && x >= 0 && x <= MaxStep:
			r.Step, r.HasStep = int64(x), true
		case integral:
			return Rollout{}, &BadLineError{Reason: ReasonStepRange}
		}
	}
	if m["group_id"] != nil {
		r.Group = refID(m["group_id"])
	} else if m["uid"] != nil {
		r.Group = refUIDPrompt(refID(m["uid"]))
	} else {
		r.Group = refID(m["group_index"])
	}
	r.RequestID = refID(m["request_id"])
	r.RolloutID = refID(m["rollout_id"])
	return r, nil
}

// refUIDPrompt strips "_SESSION_INDEX" from a verl V1 uid, by splitting on "_".
func refUIDPrompt(uid string) string {
	parts := strings.Split(uid, "_")
	if len(parts) < 3 {
		return uid
	}
	isNum := func(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }
	n := len(parts)
	prefix := strings.Join(parts[:n-2], "_")
	if !isNum(parts[n-1]) || !isNum(parts[n-2]) || prefix == "" {
		return uid
	}
	return prefix
}

func refTask(line []byte) (Task, *BadLineError) {
	m, bad := refDecode(line)
	if bad != nil {
		return Task{}, bad
	}
	var t Task
	if t.Env, t.Task, bad = refEnvTask(m); bad != nil {
		return Task{}, bad
	}
	var parts []string
	refText(&parts, refFirst(m, "text", "description", "instruction", "question", "prompt"), 0)
	t.Text = strings.Join(parts, "\n")
	if a, ok := m["tools"].([]any); ok {
		for _, e := range a {
			if o, ok := e.(map[string]any); ok {
				e = o["name"]
				if e == nil {
					fn, _ := o["function"].(map[string]any)
					e = fn["name"]
				}
			}
			if s, ok := e.(string); ok && s != "" {
				t.Tools = append(t.Tools, s)
			}
		}
	}
	if a, ok := m["tags"].([]any); ok {
		for _, e := range a {
			if s, ok := e.(string); ok && s != "" {
				t.Tags = append(t.Tags, s)
			}
		}
	}
	t.Embedding = refEmbedding(m["embedding"])
	return t, nil
}

func refText(parts *[]string, v any, depth int) {
	switch v := v.(type) {
	case string:
		if v != "" {
			*parts = append(*parts, v)
		}
	case []any:
		if depth < maxTextDepth {
			for _, e := range v {
				refText(parts, e, depth+1)
			}
		}
	case map[string]any:
		if depth >= maxTextDepth {
			return
		}
		if c := v["content"]; c != nil {
			refText(parts, c, depth+1)
		} else if s, ok := v["text"].(string); ok {
			refText(parts, s, depth+1)
		}
	}
}

func refEmbedding(v any) []float32 {
	a, ok := v.([]any)
	if !ok || len(a) == 0 {
		return nil
	}
	out := make([]float32, len(a))
	for i, e := range a {
		n, ok := e.(json.Number)
		if !ok {
			return nil
		}
		x, err := strconv.ParseFloat(n.String(), 32)
		if err != nil && math.IsInf(x, 0) {
			return nil
		}
		out[i] = float32(x)
	}
	return out
}

// refComparable reports whether the reference's view of line can be compared with the fast
// path's: encoding/json accepts it, it is valid UTF-8 (encoding/json replaces invalid bytes) and
// not nested deeper than the scanner's limit, and holds no \u escape of a lone surrogate
// (encoding/json makes it U+FFFD; the parsers refuse it in names and ids, as the golden cases
// show). For tasks, lines with \u escapes are left out too: the lists of a task are decoded by
// fastjson, which keeps lone surrogates where encoding/json writes U+FFFD.
func refComparable(line []byte, task bool) bool {
	if task && bytes.Contains(line, []byte(`\u`)) {
		return false
	}
	return json.Valid(bytes.TrimPrefix(line, bom)) && utf8.Valid(line) && depth(line) < maxDepth && !HasLoneSurrogate(line)
}

// depth is an upper bound of line's nesting (brackets inside strings counted too).
func depth(line []byte) int {
	return bytes.Count(line, []byte("[")) + bytes.Count(line, []byte("{"))
}
