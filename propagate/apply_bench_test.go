package propagate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/graph/graphtest"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/stats"
)

// BenchmarkPriorApply is one conjugate-gradient iteration's product (Xᵀ W X + λ I)·v of the
// feature prior's fit at 100k tasks (16,384 rows), the fit's main cost, on the rows and
// unknowns a prediction left.
func BenchmarkPriorApply(b *testing.B) {
	g, tasks := benchCatalogue(100_000)
	pr, _ := NewPredictor(DefaultParams())
	if _, _, err := pr.Predict(g, tasks, 21, State{}); err != nil {
		b.Fatal(err)
	}
	fp := &pr.prior
	v, out := append([]float64(nil), fp.beta...), make([]float64, len(fp.beta))
	for b.Loop() {
		fp.apply(g, v, out, 1)
	}
}

// apply, which scatters each row's w·x·v as soon as it is worked out, gives bit for bit the
// two passes it replaced: u = W X v for every row (xrow), then Xᵀ u (xt), plus λ v; over
// several chunks of rows and a ragged last one, with random rows, weights and directions.
func TestPriorApplyIsXtOfWXv(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const nf, envs = 3000, 7
	var fp featurePrior
	fp.nf, fp.off = nf, []int32{0}
	for k := range 3*fitChunk + 77 {
		fp.ids = append(fp.ids, int32(nf+rng.IntN(envs)), nf+envs)
		for range 1 + rng.IntN(20) {
			fp.ids = append(fp.ids, int32(rng.IntN(nf)))
		}
		fp.off = append(fp.off, int32(len(fp.ids)))
		fp.rows, fp.w = append(fp.rows, int32(k)), append(fp.w, rng.Float64())
	}
	for range 5 {
		v := make([]float64, nf+envs+1)
		for k := range v {
			v[k] = rng.NormFloat64()
		}
		lambda := rng.Float64() * 3
		got, want := make([]float64, len(v)), make([]float64, len(v))
		fp.apply(nil, v, got, lambda)
		u := make([]float64, len(fp.rows))
		for k := range u {
			u[k] = fp.w[k] * fp.xrow(k, v)
		}
		fp.xt(nil, u, want)
		for k := range want {
			want[k] += lambda * v[k]
		}
		for k := range want {
			if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
				t.Fatalf("unknown %d: %v, want %v", k, got[k], want[k])
			}
		}
	}
}

// collectRows, in pieces on every CPU, gives the rows and rounds of the serial pass over every
// node: nodes with rollouts and evidence, in node order, over several pieces and a ragged end.
func TestCollectRowsIsTheSerialPass(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	for _, n := range []int{0, 1, chunk - 1, chunk, 3*chunk + 77} {
		tasks, own := make([]stats.Task, n), make([]evidence, n)
		var wantRows []int32
		var wantRounds []int64
		for i := range tasks {
			if rng.IntN(3) > 0 {
				tasks[i].Rollouts, tasks[i].Round = int64(1+rng.IntN(9)), int64(rng.IntN(50))
			}
			if rng.IntN(5) > 0 {
				own[i] = evidence{float32(rng.IntN(4)), float32(rng.IntN(2))}
			}
			if tasks[i].Rollouts > 0 && own[i].a+own[i].b > 0 {
				wantRows, wantRounds = append(wantRows, int32(i)), append(wantRounds, tasks[i].Round)
			}
		}
		var fp featurePrior
		fp.collectRows(tasks, own)
		if !slices.Equal(fp.rows, wantRows) || !slices.Equal(fp.rowRound, wantRounds) {
			t.Fatalf("n %d: %d rows, want %d, or in another order", n, len(fp.rows), len(wantRows))
		}
	}
}

// columns, on every CPU, numbers the features and writes the rows' unknowns as the serial
// pass over the rows in order does: over several chunks and a ragged last one, a few rows,
// and none at all.
func TestColumnsIsTheSerialPass(t *testing.T) {
	const n = 4*fitChunk + 500
	g := graphtest.Random(n, 6, 2, 5)
	rng := rand.New(rand.NewPCG(6, 5))
	zipf := rand.NewZipf(rng, 1.1, 2, 2999)
	cat := make([]record.Task, n)
	for i := range cat {
		words := make([]string, 3+rng.IntN(12))
		for k := range words {
			words[k] = fmt.Sprintf("w%d", zipf.Uint64())
		}
		cat[i] = record.Task{Text: strings.Join(words, " "), Tools: []string{fmt.Sprintf("tool%d", rng.IntN(9))}}
	}
	g = g.WithFeatures(graph.TextFeatures(cat))
	var all []int32
	for i := range n {
		if rng.IntN(8) > 0 {
			all = append(all, int32(i))
		}
	}
	var fp featurePrior
	for _, rows := range [][]int32{all, all[:3*fitChunk+5], all[:10], nil} {
		fp.rows = rows
		fp.columns(g)
		col := make([]int32, g.Feat.Dim)
		for f := range col {
			col[f] = -1
		}
		nf, off, ids := 0, []int32{0}, []int32{}
		for _, i := range rows {
			ids = append(ids, 0, 0)
			for _, f := range g.Feat.Row(int(i)) {
				if col[f] < 0 {
					col[f] = int32(nf)
					nf++
				}
				ids = append(ids, col[f])
			}
			off = append(off, int32(len(ids)))
		}
		for k, i := range rows {
			ids[off[k]] = int32(nf) + g.Nodes[i].Env
			ids[off[k]+1] = int32(nf + len(g.Envs))
		}
		if fp.nf != nf || !slices.Equal(fp.col, col) || !slices.Equal(fp.off, off) || !slices.Equal(fp.ids, ids) {
			t.Fatalf("%d rows: %d features numbered, want %d, or other columns, offsets or unknowns", len(rows), fp.nf, nf)
		}
	}
}
