package propagate

import (
	"math"
	"testing"
)

// TestGradedMapHugeCoefficientsBounded: a stored graded map is valid() whenever its
// numbers are finite, but gradedMap narrows its coefficients to float32: a finite float64
// beyond float32's range (a crafted or damaged state; 1e39) becomes ±Inf, and calibrate's
// offset is then Inf·0 or Inf−Inf = NaN, which max/min keep and Clamp01 turns into 0. The
// answer's p_degenerate of such a graded pick is 0 ("never all-equal") instead of the
// logit offset being bounded by gradedBound as documented. It failed before the bound (review11b).
func TestGradedMapHugeCoefficientsBounded(t *testing.T) {
	for _, tc := range []struct {
		beta [2]float64
		d    float64
	}{
		{[2]float64{0, 1e39}, 0.5},     // Inf·logit(½) = Inf·0
		{[2]float64{1e39, -1e39}, 0.7}, // Inf − Inf
	} {
		c := &GradedCal{Untried: &Trend{Beta: [trendDim]float64{tc.beta[0], tc.beta[1]}, N: 5}}
		if !c.Untried.valid() {
			t.Fatalf("setup: map %v not valid", tc.beta)
		}
		got := calibrate(tc.d, c.gradedMap(0))
		lo, hi := sigmoid(logit(tc.d)-gradedBound), sigmoid(logit(tc.d)+gradedBound)
		if math.IsNaN(got) || got < lo-1e-12 || got > hi+1e-12 {
			t.Errorf("map %v, chance %v: calibrated %v, want within [%.4f, %.4f] (offset bounded by %d)", tc.beta, tc.d, got, lo, hi, gradedBound)
		}
	}
}
