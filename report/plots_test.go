package report

import (
	"fmt"
	"testing"

	"github.com/envsched/envsched/stats"
)

// TestEnvPanelsTopAndOthers: up to MaxPanels environments each get a panel, most rollouts
// first; with more, the MaxPanels−1 with the most rollouts do and the rest share "others".
func TestEnvPanelsTopAndOthers(t *testing.T) {
	data := func(n int) *Data {
		d := &Data{}
		for i := range n {
			d.Envs = append(d.Envs, EnvRow{Name: fmt.Sprintf("env-%02d", i), Env: stats.Env{Rollouts: int64(1000 - i)}})
		}
		return d
	}
	names, panelOf := envPanels(data(MaxPanels))
	if len(names) != MaxPanels || names[0] != "env-00" || panelOf["env-23"] != "env-23" {
		t.Errorf("%d environments: panels %v", MaxPanels, names)
	}
	names, panelOf = envPanels(data(MaxPanels + 2))
	if len(names) != MaxPanels || names[MaxPanels-1] != others || names[MaxPanels-2] != "env-22" {
		t.Errorf("%d environments: panels %v", MaxPanels+2, names)
	}
	for _, env := range []string{"env-23", "env-24", "env-25"} {
		if panelOf[env] != others {
			t.Errorf("%s is in panel %q, want %q", env, panelOf[env], others)
		}
	}
}
