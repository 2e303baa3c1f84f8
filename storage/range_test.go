package storage_test

import (
	"math"
	"testing"

	"github.com/envsched/envsched/storage"
)

func TestRangeNormaliseAndScale(t *testing.T) {
	cases := []struct {
		rg      storage.Range
		reward  float64
		norm    float64
		scaleOf float64 // Scale(norm); the reward itself inside the range, the clipped end outside
	}{
		{storage.Range{Min: 0, Max: 1}, 0.25, 0.25, 0.25},
		{storage.Range{Min: 0, Max: 10}, 10, 1, 10},
		{storage.Range{Min: 0, Max: 10}, 2.5, 0.25, 2.5},
		{storage.Range{Min: -1, Max: 1}, 0, 0.5, 0},
		{storage.Range{Min: -1, Max: 1}, -1, 0, -1},
		{storage.Range{Min: -1, Max: 1}, 5, 1, 1}, // above: clamped to 1
		{storage.Range{Min: 2, Max: 4}, -3, 0, 2}, // below: clamped to 0
		{storage.Range{Min: 100, Max: 300}, 150, 0.25, 150},
	}
	for _, c := range cases {
		n := c.rg.Normalise(c.reward)
		if n != c.norm {
			t.Errorf("%+v.Normalise(%g) = %g; want %g", c.rg, c.reward, n, c.norm)
		}
		if s := c.rg.Scale(n); s != c.scaleOf {
			t.Errorf("%+v.Scale(%g) = %g; want %g", c.rg, n, s, c.scaleOf)
		}
	}
}

// TestRangeCheck: a range is usable when Min < Max, both finite and the width finite too
// (-1e308 to 1e308 normalised every reward to 0).
func TestRangeCheck(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct {
		min, max float64
		ok       bool
	}{{0, 1, true}, {-1e300, 1e300, true}, {-1e308, 1e308, false}, {0, inf, false}, {-inf, 0, false},
		{nan, 1, false}, {0, nan, false}, {1, 1, false}, {2, 1, false}} {
		if err := (storage.Range{Min: c.min, Max: c.max}).Check(); (err == nil) != c.ok {
			t.Errorf("[%g, %g]: %v; want usable %v", c.min, c.max, err, c.ok)
		}
	}
}
