package graph

import "fmt"

// CheckIndex returns an error unless every described doc is in the posting list of each of its features
// exactly once, with its current weight, and in its LSH buckets exactly once, and nothing else
// is indexed.
func CheckIndex(b *Builder) error {
	want := 0
	for id := range int32(b.n()) {
		d := b.doc(id)
		want += len(d.feats)
		for i, f := range d.feats {
			n := 0
			for _, p := range b.post[f] {
				if p.doc == id {
					n++
					if p.w != d.w[i] {
						return fmt.Errorf("doc %v has weight %v in the posting list of feature %d, %v in the doc", d.key, p.w, f, d.w[i])
					}
				}
			}
			if n != 1 {
				return fmt.Errorf("doc %v is %d times in the posting list of feature %d, want once", d.key, n, f)
			}
		}
		if d.emb == nil {
			continue
		}
		for _, k := range b.lsh.keys(d.emb) {
			n := 0
			for _, o := range b.lsh.buckets[k] {
				if o == id {
					n++
				}
			}
			if n != 1 {
				return fmt.Errorf("doc %v is %d times in its LSH bucket of band %d, want once", d.key, n, k.band)
			}
		}
	}
	got := 0
	for _, ps := range b.post {
		got += len(ps)
	}
	if got != want {
		return fmt.Errorf("%d postings, want %d (one per feature of each doc)", got, want)
	}
	buckets := 0
	for _, ids := range b.lsh.buckets {
		buckets += len(ids)
	}
	embs := 0
	for id := range int32(b.n()) {
		if e := b.doc(id).emb; e != nil && b.lsh.planes[len(e)] != nil {
			embs++
		}
	}
	if buckets != embs*lshBands {
		return fmt.Errorf("%d LSH entries, want %d (one per band of each embedding of a length with "+
			"hyperplanes)", buckets, embs*lshBands)
	}
	return nil
}

// IndexEntries counts what scoring holds: postings, LSH entries, and the features, raw
// weights, weights and embedding values of every doc.
func IndexEntries(b *Builder) int {
	n := 0
	for _, ps := range b.post {
		n += len(ps)
	}
	for _, ids := range b.lsh.buckets {
		n += len(ids)
	}
	for id := range int32(b.n()) {
		d := b.doc(id)
		n += len(d.feats) + len(d.raw) + len(d.w) + len(d.emb)
	}
	return n + len(b.featID) + len(b.df) + len(b.idf) + len(b.meta)
}

// SetMaxPlaneFloats sets the bound of the hyperplanes an index holds for the test's length and
// restores it at its end.
func SetMaxPlaneFloats(t interface{ Cleanup(func()) }, n int) {
	old := maxPlaneFloats
	maxPlaneFloats = n
	t.Cleanup(func() { maxPlaneFloats = old })
}

// PlaneFloats is how many hyperplane values b's index holds.
func PlaneFloats(b *Builder) int { return b.lsh.held }
