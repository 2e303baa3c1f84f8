// Package summary adds up the per-environment statistics that storage keeps (stats.Env) into
// what people read: one row per environment in name order with its mean reward back in the
// configured reward range, and their total. `envsched stats`, the HTML report and the Prometheus
// metrics all summarise through it, so they agree to the last bit: the total is summed in one
// order (by name), and a float sum in one order gives the same bits every time.
package summary

import (
	"slices"

	"github.com/envsched/envsched/stats"
	"github.com/envsched/envsched/storage"
)

// Env is one environment's statistics, or the total of several.
type Env struct {
	Name string
	stats.Env
	MeanReward float64 // the mean reward in the reward range; 0 without rollouts
}

// Names returns the environments' names in order.
func Names[V any](envs map[string]V) []string {
	names := make([]string, 0, len(envs))
	for n := range envs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Total adds up the environments' statistics, in name order.
func Total(envs map[string]stats.Env) stats.Env {
	var t stats.Env
	for _, name := range Names(envs) {
		e := envs[name]
		t.Tasks += e.Tasks
		t.TasksSeen += e.TasksSeen
		t.Rollouts += e.Rollouts
		t.Sum += e.Sum
		t.Groups += e.Groups
		t.Degenerate += e.Degenerate
	}
	return t
}

// Envs returns a row per environment, in name order, and their total (named "total"), with
// mean rewards scaled into rg.
func Envs(envs map[string]stats.Env, rg storage.Range) (rows []Env, total Env) {
	for _, name := range Names(envs) {
		rows = append(rows, row(name, envs[name], rg))
	}
	return rows, row("total", Total(envs), rg)
}

func row(name string, e stats.Env, rg storage.Range) Env {
	r := Env{Name: name, Env: e}
	if e.Rollouts > 0 {
		r.MeanReward = rg.Scale(e.Mean())
	}
	return r
}
