package num

import (
	"errors"
	"math"
	"testing"
)

func TestClamp01(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{
		{-1, 0}, {0, 0}, {0.25, 0.25}, {1, 1}, {1.5, 1}, {math.Inf(1), 1}, {math.Inf(-1), 0}, {math.NaN(), 0},
	} {
		if got := Clamp01(c.in); got != c.want {
			t.Errorf("Clamp01(%v) = %v; want %v", c.in, got, c.want)
		}
	}
}

func TestFinite(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want bool
	}{{0, true}, {-3.5, true}, {math.MaxFloat64, true}, {math.Inf(1), false}, {math.Inf(-1), false}, {math.NaN(), false}} {
		if got := Finite(c.in); got != c.want {
			t.Errorf("Finite(%v) = %v; want %v", c.in, got, c.want)
		}
	}
}

func TestFirstBad(t *testing.T) {
	base := errors.New("invalid parameter")
	if err := FirstBad(base, []Check{{true, "a", "x", 1}, {true, "b", "y", 2}}); err != nil {
		t.Fatalf("all rows OK: %v", err)
	}
	err := FirstBad(base, []Check{{true, "a", "x", 1}, {false, "gamma", "in [0, 1]", 2.5}, {false, "c", "z", 3}})
	if !errors.Is(err, base) || err.Error() != "invalid parameter: gamma is 2.5, want in [0, 1]" {
		t.Fatalf("got %v; want the first bad row, wrapping the base error", err)
	}
}
