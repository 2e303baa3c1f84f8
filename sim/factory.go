package sim

import "fmt"

// dapoChunks is how many batches of candidates DAPO and GRESO may roll out in one step.
const dapoChunks = 4

// NewPolicy returns a fresh policy by name for world w.
func NewPolicy(name string, w *World, cfg Config) (Policy, error) {
	switch name {
	case "random":
		return &randomPolicy{}, nil
	case "uniform-env":
		return uniformEnvPolicy{}, nil
	case "dapo":
		return &dapoPolicy{chunks: dapoChunks}, nil
	case "greso":
		return newGreso(dapoChunks), nil
	case "mopps":
		return &moppsPolicy{decay: 0.9}, nil
	case "env-bandit":
		return &banditPolicy{window: 256, c: 0.3, temp: 0.1}, nil
	case "oracle":
		return oraclePolicy{}, nil
	}
	if v, ok := envschedVariant(name); ok {
		return newEnvsched(name, v, w, cfg)
	}
	return nil, fmt.Errorf("%w: unknown policy %q", ErrConfig, name)
}
