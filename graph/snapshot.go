package graph

import "slices"

// Snapshot returns the graph as it stands: nodes sorted by environment then task, Envs sorted,
// every edge present in both directions with the same Weight and Sim, each node's edges sorted
// by neighbour index. Later Adds do not change it.
func (b *Builder) Snapshot() *Graph {
	order := b.allSorted()
	pos := make([]int32, b.n())
	for i, id := range order {
		pos[id] = int32(i)
	}
	envs := slices.Clone(b.envNames)
	slices.Sort(envs)
	envRank := make([]int32, len(b.envNames))
	for e, name := range b.envNames {
		r, _ := slices.BinarySearch(envs, name)
		envRank[e] = int32(r)
	}
	nodes := make([]Node, len(order))
	off := make([]int32, len(order)+1)
	var edges []Edge
	for i, id := range order {
		nodes[i] = Node{Env: envRank[b.doc(id).env], Task: b.doc(id).key.Task}
		start := len(edges)
		for _, l := range b.adjacency(id) {
			edges = append(edges, b.edge(id, l, pos[l.to]))
		}
		slices.SortFunc(edges[start:], func(x, y Edge) int { return int(x.To) - int(y.To) })
		off[i+1] = int32(len(edges))
	}
	return NewCSR(envs, nodes, off, edges)
}

func (b *Builder) edge(from int32, l link, to int32) Edge {
	cross := b.doc(from).env != b.doc(l.to).env
	return Edge{To: to, Weight: b.weight(l.sim, cross), Sim: l.sim, Cross: cross}
}

func (b *Builder) weight(sim float32, cross bool) float32 {
	if cross {
		return float32(b.opt.CrossWeight) * sim
	}
	return sim
}

// Adjacency returns the neighbours of a node by name, sorted by environment then task: the
// list to persist for the node. It is nil for an unknown node or a node with no edges.
func (b *Builder) Adjacency(key NodeKey) []NamedEdge {
	id, ok := b.byKey[key]
	if !ok {
		return nil
	}
	var out []NamedEdge
	for _, l := range b.adjacency(id) {
		o := b.doc(l.to).key
		cross := b.doc(id).env != b.doc(l.to).env
		out = append(out, NamedEdge{Env: o.Env, Task: o.Task, Weight: b.weight(l.sim, cross), Sim: l.sim, Cross: cross})
	}
	slices.SortFunc(out, func(x, y NamedEdge) int { return compareKey(NodeKey{x.Env, x.Task}, NodeKey{y.Env, y.Task}) })
	return out
}
