package graph

import (
	"slices"
	"strings"

	"github.com/envsched/envsched/internal/par"
	"github.com/envsched/envsched/record"
)

// FeatureBuilder makes the Features of tasks given one at a time, in their order: the same
// Features as TextFeatures of the whole list, without holding the list. It reads tasks in
// blocks, splits each block's text on every CPU, and gives ids in one pass over the block, in
// order, so the ids do not depend on the number of CPUs. Not safe for concurrent use.
type FeatureBuilder struct {
	f     *Features
	vocab [3]map[string]int32 // by kind: tags, tools, words (the order of their name prefixes)
	block []record.Task
	names [][]kindName // per task of the block
}

// kindName is one feature of a task: its kind (index into FeatureBuilder.vocab) and name.
type kindName struct {
	kind uint8
	name string
}

// featureBlock is how many tasks a FeatureBuilder splits together.
const featureBlock = 8192

// NewFeatureBuilder returns an empty builder; n, when known, is the number of tasks to come.
func NewFeatureBuilder(n int) *FeatureBuilder {
	b := &FeatureBuilder{f: &Features{off: make([]int32, 1, n+1)}}
	for k := range b.vocab {
		b.vocab[k] = map[string]int32{}
	}
	return b
}

// Add appends the row of t. The builder may keep t until Features returns.
func (b *FeatureBuilder) Add(t record.Task) {
	b.block = append(b.block, t)
	if len(b.block) == featureBlock {
		b.flush()
	}
}

// Features returns the rows of every task added. The builder must not be used after.
func (b *FeatureBuilder) Features() *Features {
	b.flush()
	b.f.Dim = len(b.vocab[0]) + len(b.vocab[1]) + len(b.vocab[2])
	return b.f
}

func (b *FeatureBuilder) flush() {
	if cap(b.names) < len(b.block) {
		b.names = make([][]kindName, len(b.block))
	}
	names := b.names[:len(b.block)]
	par.Ranges(len(b.block), 512, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			names[i] = rowNames(b.block[i], names[i][:0])
		}
	})
	b.reserve(names)
	next := int32(len(b.vocab[0]) + len(b.vocab[1]) + len(b.vocab[2]))
	for _, row := range names {
		for _, kn := range row {
			id, ok := b.vocab[kn.kind][kn.name]
			if !ok {
				id = next
				next++
				b.vocab[kn.kind][strings.Clone(kn.name)] = id // a word is a view into its text
			}
			b.f.ids = append(b.f.ids, id)
		}
		b.f.off = append(b.f.off, int32(len(b.f.ids)))
	}
	clear(b.block) // drop the texts
	b.block = b.block[:0]
}

// reserve makes room in the ids for the block's names at once, and, when the number of tasks
// to come was given, for as many more as the rows so far promise for all of them: grown by
// appends, the ids of 100,000 rows were copied again and again (a tenth of a 100k start).
func (b *FeatureBuilder) reserve(names [][]kindName) {
	ids, rows := b.f.ids, len(b.f.off)-1
	need := len(ids)
	for _, row := range names {
		need += len(row)
	}
	if need <= cap(ids) {
		return
	}
	if want := cap(b.f.off) - 1; want > rows+len(names) {
		need = max(need, int(int64(need)*int64(want)/int64(rows+len(names))*9/8))
	}
	b.f.ids = slices.Grow(ids, need-len(ids))
}

// rowNames appends to out the distinct features of t in the order of their full names (kind
// prefix, then name): tags, then tools, then words, each sorted, as taskFeatures orders them.
func rowNames(t record.Task, out []kindName) []kindName {
	out = appendKind(out, 0, firstDistinct(t.Tags, MaxTaskNames, strings.TrimSpace), strings.TrimSpace)
	out = appendKind(out, 1, firstDistinct(t.Tools, MaxTaskNames, strings.TrimSpace), strings.TrimSpace)
	return appendKind(out, 2, firstDistinct(tokens(t.Text), MaxTaskWords, nil), nil)
}

// appendKind appends the distinct non-empty names (after clean, when not nil), sorted.
func appendKind(out []kindName, kind uint8, names []string, clean func(string) string) []kindName {
	start := len(out)
	for _, n := range names {
		if clean != nil {
			n = clean(n)
		}
		if n != "" {
			out = append(out, kindName{kind, n})
		}
	}
	part := out[start:]
	slices.SortFunc(part, func(a, b kindName) int { return strings.Compare(a.name, b.name) })
	return out[:start+len(slices.CompactFunc(part, func(a, b kindName) bool { return a.name == b.name }))]
}
