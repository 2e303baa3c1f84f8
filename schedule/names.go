package schedule

import (
	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/storage"
)

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

// nodeIndex finds a node of a graph by name with one hash probe: the loader looks up each
// task a commit changed (the 512 of every answer) among the graph's nodes, where a binary
// search costs about seventeen string comparisons at 100,000 tasks, on the request's path. It
// holds 8 bytes a node at most (slots at most half full) and no names: a slot holds a node,
// whose name the graph keeps.
type nodeIndex struct {
	g     *graph.Graph // the graph indexed, with n nodes; nil: none yet
	n     int
	slots []int32 // node + 1 of the name hashed there; 0 is empty
}

// of returns x indexing g, built again when g is another graph or has grown since.
func (x *nodeIndex) of(g *graph.Graph) *nodeIndex {
	if x.g == g && x.n == g.Len() {
		return x
	}
	size := 16
	for size < 2*g.Len() {
		size *= 2
	}
	x.g, x.n = g, g.Len()
	if cap(x.slots) >= size {
		x.slots = x.slots[:size]
		clear(x.slots)
	} else {
		x.slots = make([]int32, size)
	}
	mask := uint64(size - 1)
	for i, nd := range g.Nodes {
		j := hashName(g.Envs[nd.Env], nd.Task) & mask
		for x.slots[j] != 0 {
			j = (j + 1) & mask
		}
		x.slots[j] = int32(i + 1)
	}
	return x
}

// find returns the node of (env, task), as state.find does by binary search.
func (x *nodeIndex) find(env, task string) (int, bool) {
	mask := uint64(len(x.slots) - 1)
	for j := hashName(env, task) & mask; x.slots[j] != 0; j = (j + 1) & mask {
		i := int(x.slots[j] - 1)
		if nd := x.g.Nodes[i]; nd.Task == task && x.g.Envs[nd.Env] == env {
			return i, true
		}
	}
	return 0, false
}
