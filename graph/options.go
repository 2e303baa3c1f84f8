package graph

import (
	"errors"
	"fmt"
)

// Defaults of Options. A zero field of Options means its default.
const (
	DefaultK             = 8
	DefaultKCross        = 4
	DefaultMinSim        = 0.2
	DefaultMinSimCross   = 0.4
	DefaultCrossWeight   = 0.5
	DefaultMaxDF         = 1000
	DefaultToolWeight    = 2.0
	DefaultTagWeight     = 2.0
	DefaultRefreshGrowth = 0.25
)

// ErrOptions is wrapped by every error of Options.Validate.
var ErrOptions = errors.New("invalid graph options")

// Options tune how the graph is built. The zero value means all defaults.
type Options struct {
	// K is how many nearest tasks of its own environment each task links to (intra-environment
	// edges). Links are made symmetric, so a task can have more than K intra edges. A negative
	// K means none.
	K int
	// KCross is how many nearest tasks of other environments each task links to
	// (cross-environment edges). A negative KCross means none (the ablation without
	// cross-environment edges).
	KCross int
	// MinSim is the least similarity, in (0, 1], of an intra-environment edge.
	MinSim float64
	// MinSimCross is the least similarity, in (0, 1], of a cross-environment edge. It should be
	// stricter (larger) than MinSim: transfer across environments is weaker.
	MinSimCross float64
	// CrossWeight, in (0, 1], scales the weight of cross-environment edges: their Weight is
	// CrossWeight × Sim, while an intra-environment edge has Weight = Sim.
	CrossWeight float64
	// MaxDF is the document-frequency cap: a word, tool or tag found in more than MaxDF tasks is
	// not used to find candidate neighbours (its posting list is too long to scan), though it
	// still counts in the exact similarity of candidates found through rarer features. It keeps
	// the build near linear.
	MaxDF int
	// ToolWeight multiplies the weight of a tool name, a feature distinct from the words of the
	// text, before IDF.
	ToolWeight float64
	// TagWeight multiplies the weight of a tag, likewise.
	TagWeight float64
	// RefreshGrowth is how much the number of described tasks must grow, as a fraction of the
	// count at the last full build, before Add rebuilds everything with fresh IDF weights.
	// Between full builds new tasks are scored with the IDF of the last full build.
	RefreshGrowth float64
	// Workers is how many goroutines score tasks in a full build; 0 means GOMAXPROCS.
	Workers int
}

// DefaultOptions returns the options with every default filled in.
func DefaultOptions() Options { return Options{}.withDefaults() }

// Validate reports the first field that is out of range. Zero fields are valid (defaults).
func (o Options) Validate() error {
	o = o.withDefaults()
	switch {
	case !unit(o.MinSim):
		return fmt.Errorf("%w: MinSim %g must be in (0, 1]", ErrOptions, o.MinSim)
	case !unit(o.MinSimCross):
		return fmt.Errorf("%w: MinSimCross %g must be in (0, 1]", ErrOptions, o.MinSimCross)
	case !unit(o.CrossWeight):
		return fmt.Errorf("%w: CrossWeight %g must be in (0, 1]", ErrOptions, o.CrossWeight)
	case o.MaxDF < 1:
		return fmt.Errorf("%w: MaxDF %d must be at least 1", ErrOptions, o.MaxDF)
	case o.ToolWeight <= 0 || o.TagWeight <= 0:
		return fmt.Errorf("%w: ToolWeight %g and TagWeight %g must be positive", ErrOptions, o.ToolWeight, o.TagWeight)
	case o.RefreshGrowth < 0:
		return fmt.Errorf("%w: RefreshGrowth %g must not be negative", ErrOptions, o.RefreshGrowth)
	case o.Workers < 0:
		return fmt.Errorf("%w: Workers %d must not be negative", ErrOptions, o.Workers)
	}
	return nil
}

func unit(x float64) bool { return x > 0 && x <= 1 }

func (o Options) withDefaults() Options {
	d := func(v *float64, def float64) {
		if *v == 0 {
			*v = def
		}
	}
	if o.K == 0 {
		o.K = DefaultK
	}
	if o.KCross == 0 {
		o.KCross = DefaultKCross
	}
	if o.MaxDF == 0 {
		o.MaxDF = DefaultMaxDF
	}
	d(&o.MinSim, DefaultMinSim)
	d(&o.MinSimCross, DefaultMinSimCross)
	d(&o.CrossWeight, DefaultCrossWeight)
	d(&o.ToolWeight, DefaultToolWeight)
	d(&o.TagWeight, DefaultTagWeight)
	d(&o.RefreshGrowth, DefaultRefreshGrowth)
	o.K, o.KCross = max(o.K, 0), max(o.KCross, 0)
	return o
}
