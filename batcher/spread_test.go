package batcher

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/envsched/envsched/propagate"
)

// spreadByLgamma is E[2·sqrt(k/g(1−k/g))] for k ~ Beta-Binomial(g, a, b), summed from the
// probability mass function written with log-gamma: an independent way to the same number.
func spreadByLgamma(a, b float64, g int) float64 {
	lbeta := func(x, y float64) float64 {
		lx, _ := math.Lgamma(x)
		ly, _ := math.Lgamma(y)
		lxy, _ := math.Lgamma(x + y)
		return lx + ly - lxy
	}
	lchoose := func(n, k int) float64 {
		ln, _ := math.Lgamma(float64(n + 1))
		lk, _ := math.Lgamma(float64(k + 1))
		lnk, _ := math.Lgamma(float64(n - k + 1))
		return ln - lk - lnk
	}
	s := 0.0
	for k := 0; k <= g; k++ {
		p := math.Exp(lchoose(g, k) + lbeta(a+float64(k), b+float64(g-k)) - lbeta(a, b))
		q := float64(k) / float64(g)
		s += p * 2 * math.Sqrt(q*(1-q))
	}
	return s
}

func TestExpectedSpreadIsTheBetaBinomialMean(t *testing.T) {
	cases := []struct {
		name string
		a, b float64
		g    int
	}{
		{"fair coin known", 1e6, 1e6, 8},
		{"uniform prior", 1, 1, 8},
		{"skewed", 2, 8, 8},
		{"confident and rare", 5, 500, 8},
		{"small counts", 0.3, 0.7, 8},
		{"pair", 3, 3, 2},
		{"large group", 7, 3, 64},
		{"huge group", 40, 60, 512},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pr := &propagate.Prediction{Alpha: c.a, Beta: c.b}
			got, want := ExpectedSpread(pr, c.g), spreadByLgamma(c.a, c.b, c.g)
			if math.Abs(got-want) > 1e-9 {
				t.Fatalf("ExpectedSpread(%v, %v, %d) = %.12f, want %.12f", c.a, c.b, c.g, got, want)
			}
		})
	}
}

// The measure must rank tasks as the learning signal does: a known fair coin best, a known
// ⅕ task well above 4·variance's ratio to it, and an uncertain task (likely all-or-nothing)
// below a known task of the same mean.
func TestExpectedSpreadRanksLikeTheSignal(t *testing.T) {
	known := func(p float64) *propagate.Prediction {
		return &propagate.Prediction{Alpha: 1e5 * p, Beta: 1e5 * (1 - p)}
	}
	half, fifth := ExpectedSpread(known(0.5), 8), ExpectedSpread(known(0.2), 8)
	if !(half > fifth) {
		t.Fatalf("spread at ½ %.3f not above spread at ⅕ %.3f", half, fifth)
	}
	if r, v := fifth/half, 0.2*0.8/0.25; r <= v+0.05 {
		t.Fatalf("spread ratio ⅕ to ½ is %.3f; the variance ratio is %.3f: the measures do not differ", r, v)
	}
	vague := &propagate.Prediction{Alpha: 0.5, Beta: 0.5}
	if s := ExpectedSpread(vague, 8); s >= half*0.7 {
		t.Fatalf("an all-or-nothing prior's spread %.3f is close to a known fair coin's %.3f", s, half)
	}
	if s := ExpectedSpread(known(0.5), 1); s != 0 {
		t.Fatalf("a group of one has spread %v, want 0", s)
	}
}

func TestExpectedSpreadStaysInRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		a, b := math.Exp(rng.NormFloat64()*4), math.Exp(rng.NormFloat64()*4)
		g := 2 + rng.IntN(300)
		s := ExpectedSpread(&propagate.Prediction{Alpha: a, Beta: b}, g)
		if !(s >= 0 && s <= 1) || math.IsNaN(s) {
			t.Fatalf("ExpectedSpread(%g, %g, %d) = %v, want a number in [0, 1]", a, b, g, s)
		}
	}
}
