package propagate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// shiftThenSpread is the offset then the dispersion correction as two separate steps, each
// through the mean (the computation Predictor.adjust replaced): the reference it is held to.
func shiftThenSpread(d *drift, env int32, alpha, beta, centre float64, tried bool, stale float64) (a, b, pre float64) {
	if off := d.offsetOf(env, tried, stale, d.re); off != 0 {
		n := alpha + beta
		m := sigmoid(logit(alpha/n) + off)
		alpha, beta = m*n, (1-m)*n
	}
	pre = alpha / (alpha + beta)
	if k := d.correction(env, tried); k != dispersionGrid[unitScale] {
		m, n := k.apply(pre, alpha+beta, centre)
		alpha, beta = m*n, (1-m)*n
	}
	return alpha, beta, pre
}

// TestAdjustMatchesShiftThenSpread holds adjust to the two-step reference for every
// combination of offset (none, an environment's whole or a share of it, re-chosen, channel
// off, beyond the logit clamp) and correction (unit, scale only, steeper and flatter slopes):
// bit for bit without an offset; with one, the count to 1e-12 relative and the mean, and the
// mean after the offset that the baselines keep (preMean), to 1e-12 plus the rounding of the
// reference's own round trips through the mean (preMean bit for bit on the fused path).
func TestAdjustMatchesShiftThenSpread(t *testing.T) {
	unit := dispersionGrid[unitScale]
	var scaleOnly, slope, flat correction // slope: the steepest, flat: the flattest not 0
	for _, k := range dispersionGrid {
		if k.slope == 1 && k.scale != 1 {
			scaleOnly = k
		}
		if k.scale != 1 && k.slope > max(1, slope.slope) {
			slope = k
		}
		if k.scale != 1 && k.slope > 0 && k.slope < 1 && (flat == (correction{}) || k.slope < flat.slope) {
			flat = k
		}
	}
	if scaleOnly == (correction{}) || slope == (correction{}) || flat == (correction{}) {
		t.Fatalf("grid lacks a scale-only, a steeper or a flatter correction: %v", dispersionGrid)
	}
	cases := []struct {
		name   string
		cur    float64 // the environment's offset
		re     float64 // the re-chosen offset, on when reRate > 0
		reRate float64
		k      correction
	}{
		{"nothing", 0, 0, 0, unit},
		{"env offset", 0.7, 0, 0, unit},
		{"re-chosen offset", 0, -0.9, 0.1, unit},
		{"env offset, re-chosen channel off", 0.8, -0.9, 0, unit},
		{"scale only", 0, 0, 0, scaleOnly},
		{"slope only", 0, 0, 0, slope},
		{"offset and scale", -0.4, 0, 0, scaleOnly},
		{"offset and slope", 0.6, 0, 0, slope},
		{"re-chosen offset and slope", 0, 1.1, 0.2, slope},
		{"offset and flatter slope", 0.6, 0, 0, flat},
		{"offset beyond the clamp and slope", 30, -30, 0.2, slope},
		{"offset beyond the clamp and flatter slope", 16, -16, 0.2, flat},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := &drift{cur: []float64{c.cur}, re: c.re, reRate: c.reRate, scale: []correction{c.k}, scaleRe: c.k,
				unit: []bool{c.k == unit}, unitRe: c.k == unit} // as drift.current sets them
			pr := &Predictor{drift: *d}
			pr.expOffsets()
			for range 2000 {
				alpha, beta := math.Exp(rng.NormFloat64()*3), math.Exp(rng.NormFloat64()*3)
				if rng.IntN(20) == 0 {
					alpha = 1e-9 // a mean at the logit's clamp
				}
				centre, tried, st := rng.NormFloat64(), rng.IntN(2) == 0, 1.0 // stale is 1 for a node never rolled out
				if tried {
					st = rng.Float64()
				}
				wa, wb, wpre := shiftThenSpread(d, 0, alpha, beta, centre, tried, st)
				base := alpha / (alpha + beta)
				a, b, pre, lazy := pr.adjust(0, alpha, beta, base, math.NaN(), centre, tried, st, d.re)
				if a2, b2, pre2, lazy2 := pr.adjust(0, alpha, beta, base, logit(base), centre, tried, st, d.re); a2 != a || b2 != b || pre2 != pre || lazy2 != lazy {
					t.Fatalf("adjust with the logit of base given: %v, %v, %v, %v; worked out: %v, %v, %v, %v", a2, b2, pre2, lazy2, a, b, pre, lazy)
				}
				p := Prediction{pre: pre, preLogit: lazy, count: alpha + beta}
				off := d.offsetOf(0, tried, st, d.re)
				if off == 0 {
					if a != wa || b != wb || p.preMean() != wpre || lazy {
						t.Fatalf("adjust(%g, %g, tried %v) = %v, %v, pre %v, lazy %v, want %v, %v, %v", alpha, beta, tried, a, b, p.preMean(), lazy, wa, wb, wpre)
					}
					continue
				}
				if lazy != (c.k.slope != 1) {
					t.Fatalf("offset %g and slope %g: fused path %v", off, c.k.slope, lazy)
				}
				if lazy && p.preMean() != wpre {
					t.Fatalf("preMean(%g, %g, tried %v) = %v, want %v", alpha, beta, tried, p.preMean(), wpre)
				}
				// the reference's round trips through the mean lose about ε/(q(1−q)) of the
				// logit (q the mean, clamped as logit clamps it), which the slope carries over
				q := min(max(min(wpre, base), 1e-6), 1-1e-6)
				q = min(q, 1-min(max(max(wpre, base), 1e-6), 1-1e-6))
				tol := 1e-12 + 1e-15*max(c.k.slope, 1)/q
				if math.Abs(p.preMean()-wpre) > tol {
					t.Fatalf("preMean(%g, %g, tried %v) = %v, want %v within %g", alpha, beta, tried, p.preMean(), wpre, tol)
				}
				// a count that depends on the mean (a correction with (4m(1−m))^(−η), η ≤ 1)
				// carries the mean's rounding over, at most 1/(m(1−m)) times, relative
				m, wm := a/(a+b), wa/(wa+wb)
				ctol := 1e-12 + tol/(wm*(1-wm))
				if math.Abs(m-wm) > tol || math.Abs((a+b)-(wa+wb)) > ctol*(wa+wb) {
					t.Fatalf("adjust(%g, %g, tried %v) = %v, %v, want %v, %v: mean or count beyond 1e-12", alpha, beta, tried, a, b, wa, wb)
				}
			}
		})
	}
}

// The unit flags drift.current sets are what adjust used to compare for every node: after a
// call with no dispersion measured (every correction the unit one) and after one whose every
// channel prefers another correction, each environment's flag and the re-chosen one say
// whether its correction equals the unit correction.
func TestUnitFlagsAreTheCorrectionsComparedToUnit(t *testing.T) {
	g, tasks := benchCatalogue(3000)
	pr, _ := NewPredictor(DefaultParams())
	_, st, err := pr.Predict(g, tasks, 21, State{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		st   State
	}{{"nothing measured", State{}}, {"skewed", State{Dispersion: skewed(st)}}} {
		if _, _, err := pr.Predict(g, tasks, 22, c.st); err != nil {
			t.Fatal(err)
		}
		d, unit := &pr.drift, dispersionGrid[unitScale]
		units := 0
		for e := range g.Envs {
			if d.unit[e] != (d.scale[e] == unit) {
				t.Errorf("%s: environment %d: unit flag %v for correction %+v", c.name, e, d.unit[e], d.scale[e])
			}
			if d.unit[e] {
				units++
			}
		}
		if d.unitRe != (d.scaleRe == unit) {
			t.Errorf("%s: re-chosen unit flag %v for correction %+v", c.name, d.unitRe, d.scaleRe)
		}
		if c.name == "skewed" && (units == len(g.Envs) || d.unitRe) {
			t.Errorf("skewed: %d of %d environments and re-chosen %v left at the unit correction: the case tests nothing", units, len(g.Envs), d.unitRe)
		}
	}
}
