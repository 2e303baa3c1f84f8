package daemon

import (
	"cmp"
	"maps"
	"slices"

	"github.com/envsched/envsched/propagate"
)

// StatusEnvsMax is the most environments whose corrections status.json lists. status.json is
// rewritten every --status-interval and read whole by `envsched status` and by dashboards; a
// catalogue of 100,000 environments with groups measured would make it some 20 MB, past what
// `envsched status` reads (16 MiB), and every rewrite would encode it all. The environments
// with the most groups behind their correction are kept (ties by name); `envsched stats --json`
// reads the database and lists them all.
const StatusEnvsMax = 1000

// shownEnvs returns c with at most limit environments in Envs, those with the most (decayed)
// groups first, ties by name, and how many were left out. c itself is not changed: it is the
// cached copy every status write starts from.
func shownEnvs(c *propagate.Corrections, limit int) (*propagate.Corrections, int) {
	if c == nil || len(c.Envs) <= limit {
		return c, 0
	}
	names := slices.Collect(maps.Keys(c.Envs))
	slices.SortFunc(names, func(a, b string) int {
		if r := cmp.Compare(c.Envs[b].Groups, c.Envs[a].Groups); r != 0 {
			return r
		}
		return cmp.Compare(a, b)
	})
	kept := *c
	kept.Envs = make(map[string]propagate.EnvCorrection, limit)
	for _, n := range names[:limit] {
		kept.Envs[n] = c.Envs[n]
	}
	return &kept, len(names) - limit
}
