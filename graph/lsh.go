package graph

import (
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"
)

// Random-hyperplane LSH for embeddings: lshBands bands of lshBits sign bits each. Two unit
// vectors at cosine 0.9 share at least one band with probability about 0.93; unrelated ones
// share a given band with probability 2^-12.
const (
	lshBands = 16
	lshBits  = 12
)

// lshKey names one bucket: a band of the sign bits of embeddings of one length.
type lshKey struct {
	dim, band int32
	sig       uint32
}

// maxPlaneFloats bounds the hyperplanes an index holds, all embedding lengths together: 2^25
// values (256 MiB), some 170,000 dimensions in all (a real catalogue uses one or two lengths
// of a few thousand: 768 takes 1.2 MB). Each length takes lshBands·lshBits·length values, so
// a 4 MB catalogue of ten rows whose embeddings had ten lengths of about 200,000 made the
// builder hold 3 GB of hyperplanes (twenty such rows of a million: 30 GB, the process killed
// at every start). Embeddings of a length left out of the bound are not bucketed: they are
// still compared exactly with the candidates text, tools and tags find, and the builder lists
// them (Builder.Unbucketed) for its caller to log. A full build gives the bound to the most
// common lengths first (reserve): first come, first served in key order, one stray row of
// another length in an environment sorting first took the bound from the catalogue's own length,
// whose near-duplicates were then no longer found, silently. Between full builds a length new
// to the builder is served if the bound still has room.
var maxPlaneFloats = 1 << 25

// lshIndex holds the hyperplanes per embedding length and the buckets. The hyperplanes are
// drawn from a generator seeded by the length, so every builder hashes alike.
type lshIndex struct {
	planes  map[int][]float64
	buckets map[lshKey][]int32
	held    int         // values in planes
	leftOut map[int]int // rows added of each length the bound left out
}

func newLSHIndex() lshIndex {
	return lshIndex{planes: map[int][]float64{}, buckets: map[lshKey][]int32{}, leftOut: map[int]int{}}
}

// reserve draws the hyperplanes of the lengths of rows (length -> rows of it), the most
// common first (of as many, the shorter first), each that still fits in the bound.
func (x *lshIndex) reserve(rows map[int]int) {
	dims := make([]int, 0, len(rows))
	for d := range rows {
		dims = append(dims, d)
	}
	slices.SortFunc(dims, func(a, b int) int {
		if rows[a] != rows[b] {
			return rows[b] - rows[a]
		}
		return a - b
	})
	for _, d := range dims {
		x.hyperplanes(d)
	}
}

// hyperplanes returns the hyperplanes of embeddings of length dim, drawn when first needed, or
// nil when they would take the index past maxPlaneFloats.
func (x *lshIndex) hyperplanes(dim int) []float64 {
	if p, ok := x.planes[dim]; ok {
		return p
	}
	n := lshBands * lshBits * dim
	if n > maxPlaneFloats-x.held {
		return nil
	}
	x.held += n
	rng := rand.New(rand.NewPCG(uint64(dim), 0x5eed))
	p := make([]float64, lshBands*lshBits*dim)
	for i := range p {
		p[i] = rng.NormFloat64()
	}
	x.planes[dim] = p
	return p
}

// keys returns the bucket of emb in every band. It is read-only once the hyperplanes of the
// length exist, which add guarantees before any query.
func (x *lshIndex) keys(emb []float64) []lshKey {
	dim := len(emb)
	p := x.planes[dim]
	if p == nil {
		return nil
	}
	keys := make([]lshKey, lshBands)
	for band := range lshBands {
		var sig uint32
		for bit := range lshBits {
			row := (band*lshBits + bit) * dim
			if floats.Dot(p[row:row+dim], emb) > 0 {
				sig |= 1 << bit
			}
		}
		keys[band] = lshKey{int32(dim), int32(band), sig}
	}
	return keys
}

func (x *lshIndex) add(id int32, emb []float64) {
	if x.hyperplanes(len(emb)) == nil {
		if x.leftOut == nil {
			x.leftOut = map[int]int{}
		}
		x.leftOut[len(emb)]++
		return
	}
	for _, k := range x.keys(emb) {
		x.buckets[k] = append(x.buckets[k], id)
	}
}

func (x *lshIndex) remove(id int32, emb []float64) {
	for _, k := range x.keys(emb) {
		x.buckets[k] = slices.DeleteFunc(x.buckets[k], func(o int32) bool { return o == id })
	}
}
