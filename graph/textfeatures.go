package graph

import "github.com/envsched/envsched/record"

// Features are the catalogue features of a graph's nodes as sparse binary rows: the distinct
// words of a task's text, its tools and its tags, each an id in [0, Dim). The predictor's
// feature prior reads them (see propagate). A node with no catalogue row has an empty row.
type Features struct {
	Dim int
	off []int32 // Row(i) is ids[off[i]:off[i+1]]
	ids []int32
}

// TextFeatures returns the features of tasks, row i for tasks[i]: words as the graph's
// similarity reads them (lower case, letters and digits, no one-letter words or pure
// numbers), tools and tags as separate kinds. Ids are given in order of first appearance,
// so the same tasks in the same order give the same Features.
func TextFeatures(tasks []record.Task) *Features {
	b := NewFeatureBuilder(len(tasks))
	for _, t := range tasks {
		b.Add(t)
	}
	return b.Features()
}

// Len is the number of rows.
func (f *Features) Len() int { return len(f.off) - 1 }

// Row returns the feature ids of row i. The slice must not be changed.
func (f *Features) Row(i int) []int32 { return f.ids[f.off[i]:f.off[i+1]] }

// NNZ is the number of (row, feature) pairs.
func (f *Features) NNZ() int { return len(f.ids) }

// WithFeatures returns a copy of g that carries f, whose rows must be indexed like g.Nodes.
// The copy shares g's nodes and edges.
func (g *Graph) WithFeatures(f *Features) *Graph {
	c := *g
	c.Feat = f
	return &c
}

// Spread returns the rows of f placed among n rows: row i of f becomes row pos[i], and the
// other rows are empty. pos must be increasing and below n. It serves a graph grown by
// isolated nodes, which have no catalogue row.
func (f *Features) Spread(n int, pos []int32) *Features {
	out := &Features{Dim: f.Dim, off: make([]int32, n+1), ids: make([]int32, 0, len(f.ids))}
	next := 0
	for k := range n {
		if next < len(pos) && int(pos[next]) == k {
			out.ids = append(out.ids, f.Row(next)...)
			next++
		}
		out.off[k+1] = int32(len(out.ids))
	}
	return out
}
