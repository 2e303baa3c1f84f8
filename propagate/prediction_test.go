package propagate

import (
	"math"
	"testing"
)

// integrateDegenerate is the chance of an all-equal group of g by numerical integration of
// p^g + (1−p)^g against the Beta(a, b) density (midpoint rule; a, b >= 1 so the density is
// bounded).
func integrateDegenerate(a, b float64, g int) float64 {
	const steps = 200000
	lb := lbeta(a, b)
	sum := 0.0
	for k := range steps {
		p := (float64(k) + 0.5) / steps
		dens := math.Exp((a-1)*math.Log(p) + (b-1)*math.Log1p(-p) - lb)
		sum += (math.Pow(p, float64(g)) + math.Pow(1-p, float64(g))) * dens
	}
	return sum / steps
}

// binomialMixture sums, over k = 0..g, C(g, k)·B(a+k, b+g−k)/B(a, b): the Beta-Binomial
// distribution, term by term. It returns the all-equal mass (k = 0 and k = g) and the total.
func binomialMixture(a, b float64, g int) (equal, total float64) {
	lb := lbeta(a, b)
	for k := 0; k <= g; k++ {
		lc, _ := math.Lgamma(float64(g + 1))
		lk, _ := math.Lgamma(float64(k + 1))
		lr, _ := math.Lgamma(float64(g - k + 1))
		p := math.Exp(lc - lk - lr + lbeta(a+float64(k), b+float64(g-k)) - lb)
		total += p
		if k == 0 || k == g {
			equal += p
		}
	}
	return equal, total
}

func TestBetaBinomialDegenerateMatchesBruteForce(t *testing.T) {
	cases := []struct {
		a, b float64
		g    int
	}{
		{1, 1, 2}, {1, 1, 8}, {2, 5, 8}, {0.3, 0.7, 8}, {10, 1, 16}, {1.5, 1.5, 1},
		{40, 60, 8}, {0.05, 3, 4}, {3, 0.05, 32}, {200, 1, 64}, {1, 1, 1024},
	}
	for _, c := range cases {
		got := BetaBinomialDegenerate(c.a, c.b, c.g)
		equal, total := binomialMixture(c.a, c.b, c.g)
		if math.Abs(total-1) > 1e-9 {
			t.Fatalf("mixture of Beta(%g,%g), g=%d sums to %g", c.a, c.b, c.g, total)
		}
		if c.g == 1 {
			equal = 1
		}
		if math.Abs(got-equal) > 1e-9 {
			t.Errorf("Beta(%g,%g), g=%d: got %.12f, binomial mixture %.12f", c.a, c.b, c.g, got, equal)
		}
		if c.a >= 1 && c.b >= 1 && c.g <= 64 {
			if in := integrateDegenerate(c.a, c.b, c.g); math.Abs(got-in) > 1e-6 {
				t.Errorf("Beta(%g,%g), g=%d: got %.9f, integral %.9f", c.a, c.b, c.g, got, in)
			}
		}
	}
}

func TestBetaBinomialDegenerateLimits(t *testing.T) {
	// A near-certain success: every group is all ones.
	if p := BetaBinomialDegenerate(1e6, 1e-6, 8); p < 0.999 {
		t.Errorf("near-certain task: degenerate chance %g, want about 1", p)
	}
	// A known coin: 2·0.5^8.
	if p := BetaBinomialDegenerate(1e7, 1e7, 8); math.Abs(p-2/256.0) > 1e-5 {
		t.Errorf("fair coin: degenerate chance %g, want %g", p, 2/256.0)
	}
	if v := BetaVariance(1e7, 1e7); math.Abs(v-0.25) > 1e-6 {
		t.Errorf("fair coin variance %g, want 0.25", v)
	}
}
