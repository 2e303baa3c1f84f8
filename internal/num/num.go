// Package num holds the small numeric helpers that propagate and batcher share: clamping into
// [0, 1], finiteness, and the table by which each checks its parameters.
package num

import (
	"fmt"
	"math"
)

// Clamp01 returns x clamped into [0, 1]; NaN becomes 0.
func Clamp01(x float64) float64 {
	switch {
	case x < 0 || math.IsNaN(x):
		return 0
	case x > 1:
		return 1
	}
	return x
}

// Finite reports whether x is neither NaN nor infinite.
func Finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Check is one row of a parameter table: whether the value is in range, the parameter's name,
// the range it needs in words, and the value. It is an unnamed struct type so that the tables
// can stay one short line per parameter ({ok, name, want, value}).
type Check = struct {
	OK   bool
	Name string
	Want string
	Val  any
}

// FirstBad returns, for the first row that is not OK, the error "ERR: NAME is VAL, want WANT"
// wrapping err; nil when every row is.
func FirstBad(err error, checks []Check) error {
	for _, c := range checks {
		if !c.OK {
			return fmt.Errorf("%w: %s is %v, want %s", err, c.Name, c.Val, c.Want)
		}
	}
	return nil
}
