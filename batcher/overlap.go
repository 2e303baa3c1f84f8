package batcher

import (
	"math"

	"github.com/envsched/envsched/graph"
)

// wordWeights are the inverse document frequencies of a graph's catalogue words, and per node
// the sum over its words: what Params.Overlap weighs a candidate's words by. A word of one
// task alone weighs 0 (no other task can share it).
type wordWeights struct {
	feat *graph.Features // the features they were worked out for
	n    int             // and the number of nodes
	idf  []float64       // per word
	row  []float64       // per node: the sum of its words' idf
}

// weightsFor returns the word weights of g's features, reusing w when it was worked out for
// the same features and nodes. Cost O(nodes + words of every node).
func weightsFor(w *wordWeights, g *graph.Graph) *wordWeights {
	f := g.Feat
	if w != nil && w.feat == f && w.n == g.Len() {
		return w
	}
	out := &wordWeights{feat: f, n: g.Len(), idf: make([]float64, f.Dim), row: make([]float64, g.Len())}
	rows := min(f.Len(), g.Len())
	df := make([]int32, f.Dim)
	for i := range rows {
		for _, id := range f.Row(i) {
			df[id]++
		}
	}
	for id, d := range df {
		if d >= 2 {
			out.idf[id] = math.Log(float64(g.Len()) / float64(d))
		}
	}
	for i := range rows {
		sum := 0.0
		for _, id := range f.Row(i) {
			sum += out.idf[id]
		}
		out.row[i] = sum
	}
	return out
}

// halves[c] is 1 − ½^c, the share of a word's value a round has used once c taken tasks hold
// it; past len−1 it is 1 to float precision.
var halves = func() [64]float64 {
	var h [64]float64
	for c := range h {
		h[c] = 1 - math.Ldexp(1, -c)
	}
	return h
}()

// overlap is the share of node i's word weight that the tasks taken in the round already
// hold, in [0, 1]; 0 when Overlap is off or the graph has no features.
func (s *selector) overlap(i int32) float64 {
	if s.words == nil || int(i) >= s.g.Feat.Len() || s.words.row[i] == 0 {
		return 0
	}
	used := 0.0
	for _, id := range s.g.Feat.Row(int(i)) {
		if c := s.wordCount[id]; c > 0 {
			used += s.words.idf[id] * halves[min(int(c), len(halves)-1)]
		}
	}
	return used / s.words.row[i]
}

// takeWords counts node i's words as held by the round.
func (s *selector) takeWords(i int) {
	if s.words == nil || i >= s.g.Feat.Len() {
		return
	}
	for _, id := range s.g.Feat.Row(i) {
		if s.wordCount[id] == 0 {
			s.wordsTouched = append(s.wordsTouched, id)
		}
		s.wordCount[id]++
	}
}

// resetWords forgets the words the previous round held.
func (s *selector) resetWords() {
	for _, id := range s.wordsTouched {
		s.wordCount[id] = 0
	}
	s.wordsTouched = s.wordsTouched[:0]
}
