package schedule

import "github.com/envsched/envsched/storage"

// nameIndex finds a task's position among sorted names with one hash probe, where a binary
// search over a million names costs twenty string comparisons; the loader looks up every
// stored edge's neighbour by name. It holds 8 bytes a name (slots at most half full).
type nameIndex struct {
	names []storage.TaskKey
	slots []int32 // position + 1 of the name hashed there; 0 is empty
}

func newNameIndex(names []storage.TaskKey) nameIndex {
	size := 16
	for size < 2*len(names) {
		size *= 2
	}
	x := nameIndex{names: names, slots: make([]int32, size)}
	mask := uint64(size - 1)
	for i, k := range names {
		j := hashName(k.Env, k.Task) & mask
		for x.slots[j] != 0 {
			j = (j + 1) & mask
		}
		x.slots[j] = int32(i + 1)
	}
	return x
}

// find returns the position of (env, task) among the names.
func (x nameIndex) find(env, task string) (int, bool) {
	mask := uint64(len(x.slots) - 1)
	for j := hashName(env, task) & mask; x.slots[j] != 0; j = (j + 1) & mask {
		i := int(x.slots[j] - 1)
		if k := x.names[i]; k.Task == task && k.Env == env {
			return i, true
		}
	}
	return 0, false
}

// hashName is FNV-1a over env, a zero byte and task, mixed so that its low bits (which pick
// the slot) depend on every byte.
func hashName(env, task string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(env); i++ {
		h = (h ^ uint64(env[i])) * 1099511628211
	}
	h *= 1099511628211 // the separator (xor with 0)
	for i := 0; i < len(task); i++ {
		h = (h ^ uint64(task[i])) * 1099511628211
	}
	return h ^ h>>29
}
