package record

import "github.com/valyala/fastjson"

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

	nKeys
)

// Aliases in priority order.
var (
	envKeys  = []key{kEnv, kDataSource, kEnvClass, kEnvironment, kTaskName, kTag, kDomain, kXDataSource}
	taskKeys = []key{kTaskID, kTask, kXTaskID, kIndex, kXIndex, kItemID, kID}
)

// fields holds, per key, the value of its last occurrence; nil when absent or null.
type fields [nKeys]*fastjson.Value

// fill records the keys of the top-level object o and of its extra_info object.
func (f *fields) fill(o *fastjson.Object) {
	o.Visit(func(k []byte, v *fastjson.Value) {
		if string(k) == "extra_info" {
			f.fillExtra(v)
			return
		}
		if i, ok := topKey(k); ok {
			f.set(i, v)
		}
	})
}

// fillExtra records the nested keys of extra_info. A later extra_info replaces an earlier one
// whole, as a later duplicate key does.
func (f *fields) fillExtra(v *fastjson.Value) {
	f[kXDataSource], f[kXTaskID], f[kXIndex] = nil, nil, nil
	o, err := v.Object()
	if err != nil {
		return
	}
	o.Visit(func(k []byte, v *fastjson.Value) {
		switch string(k) {
		case "data_source":
			f.set(kXDataSource, v)
		case "task_id":
			f.set(kXTaskID, v)
		case "index":
			f.set(kXIndex, v)
		}
	})
}

func (f *fields) set(i key, v *fastjson.Value) {
	if v.Type() == fastjson.TypeNull {
		v = nil
	}
	f[i] = v
}

// first returns the value of the first of keys present, or nil.
func (f *fields) first(keys ...key) *fastjson.Value {
	for _, k := range keys {
		if f[k] != nil {
			return f[k]
		}
	}
	return nil
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
	}
	return 0, false
}
