package record

import "bytes"

// key names one key that some field is read from.
type key int

// The keys of PROTOCOL.md. Nested keys of extra_info carry an x prefix.
const (
	kEnv key = iota
	kDataSource
	kEnvClass
	kEnvironment
	kTaskName
	kTag
	kDomain
	kXDataSource

	kTaskID
	kTask
	kXTaskID
	kIndex
	kXIndex
	kItemID
	kID

	kText
	kDescription
	kInstruction
	kQuestion
	kPrompt
	kTools
	kTags
	kEmbedding

	kReward
	kScore
	kGroupID
	kUID
	kGroupIndex
	kStep
	kGlobalStep
	kRequestID
	kRolloutID
	kCompletion
	kResponse
	kOutput

	nKeys
)

// Aliases in priority order.
var (
	envKeys  = []key{kEnv, kDataSource, kEnvClass, kEnvironment, kTaskName, kTag, kDomain, kXDataSource}
	taskKeys = []key{kTaskID, kTask, kXTaskID, kIndex, kXIndex, kItemID, kID}
)

// fields holds, per key, the span of its last occurrence; absent (kind none) when missing or null.
type fields [nKeys]span

// setTop is the onKey of the top-level object.
func (f *fields) setTop(sc scanner, key span, at, depth int) (int, error) {
	name, ok := keyName(sc, key)
	if !ok {
		return 0, errSyntax
	}
	if string(name) == "extra_info" {
		return f.setExtraInfo(sc, at, depth)
	}
	end, k, err := sc.value(at, depth)
	if i, known := topKey(name); known {
		f[i] = mkSpan(at, end, k)
	}
	return end, err
}

// setExtraInfo records the nested keys of extra_info. A later extra_info replaces an earlier one
// whole, as a later duplicate key does.
func (f *fields) setExtraInfo(sc scanner, at, depth int) (int, error) {
	f[kXDataSource], f[kXTaskID], f[kXIndex] = span{}, span{}, span{}
	if at >= len(sc.s) || sc.s[at] != '{' {
		end, _, err := sc.value(at, depth)
		return end, err
	}
	return sc.object(at, depth+1, func(sc scanner, key span, at, depth int) (int, error) {
		end, k, err := sc.value(at, depth)
		name, ok := keyName(sc, key)
		if !ok {
			return 0, errSyntax
		}
		switch string(name) {
		case "data_source":
			f[kXDataSource] = mkSpan(at, end, k)
		case "task_id":
			f[kXTaskID] = mkSpan(at, end, k)
		case "index":
			f[kXIndex] = mkSpan(at, end, k)
		}
		return end, err
	})
}

// keyName returns the text of a key; false when it has a malformed escape.
func keyName(sc scanner, key span) ([]byte, bool) {
	raw := sc.s[key.start+1 : key.end-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw, true
	}
	return unescape(raw)
}

// first returns the span of the first of keys present, or an absent span.
func (f *fields) first(keys ...key) span {
	for _, k := range keys {
		if f[k].kind != none {
			return f[k]
		}
	}
	return span{}
}

// topKey maps a top-level key to its index; the switch compiles to a search without allocation.
func topKey(k []byte) (key, bool) {
	switch string(k) {
	case "env":
		return kEnv, true
	case "data_source":
		return kDataSource, true
	case "env_class":
		return kEnvClass, true
	case "environment":
		return kEnvironment, true
	case "task_name":
		return kTaskName, true
	case "tag":
		return kTag, true
	case "domain":
		return kDomain, true
	case "task_id":
		return kTaskID, true
	case "task":
		return kTask, true
	case "index":
		return kIndex, true
	case "item_id":
		return kItemID, true
	case "id":
		return kID, true
	case "text":
		return kText, true
	case "description":
		return kDescription, true
	case "instruction":
		return kInstruction, true
	case "question":
		return kQuestion, true
	case "prompt":
		return kPrompt, true
	case "tools":
		return kTools, true
	case "tags":
		return kTags, true
	case "embedding":
		return kEmbedding, true
	case "reward":
		return kReward, true
	case "score":
		return kScore, true
	case "group_id":
		return kGroupID, true
	case "uid":
		return kUID, true
	case "group_index":
		return kGroupIndex, true
	case "step":
		return kStep, true
	case "global_step":
		return kGlobalStep, true
	case "request_id":
		return kRequestID, true
	case "rollout_id":
		return kRolloutID, true
	case "completion":
		return kCompletion, true
	case "response":
		return kResponse, true
	case "output":
		return kOutput, true
	}
	return 0, false
}
