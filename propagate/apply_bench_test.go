package propagate

import (
	"math"
	"math/rand/v2"
	"testing"
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
// several chunks of rows and with random directions.
func TestPriorApplyIsXtOfWXv(t *testing.T) {
	g, tasks := benchCatalogue(15_000)
	pr, _ := NewPredictor(DefaultParams())
	if _, _, err := pr.Predict(g, tasks, 21, State{}); err != nil {
		t.Fatal(err)
	}
	fp := &pr.prior
	if chunks := (len(fp.rows) + fitChunk - 1) / fitChunk; chunks < 3 {
		t.Fatalf("%d chunks of rows: the test wants several", chunks)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for range 5 {
		v := make([]float64, len(fp.beta))
		for k := range v {
			v[k] = rng.NormFloat64()
		}
		lambda := rng.Float64() * 3
		got, want := make([]float64, len(v)), make([]float64, len(v))
		fp.apply(g, v, got, lambda)
		u := make([]float64, len(fp.rows))
		for k := range u {
			u[k] = fp.w[k] * fp.xrow(k, v)
		}
		fp.xt(g, u, want)
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
