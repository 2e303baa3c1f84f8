package propagate

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/envsched/envsched/stats"
)

// BenchmarkPredictCorrected measures one prediction as the daemon makes it once the
// corrections are running, against the same call with them off: a State whose baseline
// holds a batch of 512 tasks, each with a new group of 8 (so every call measures drift and
// dispersion), and whose dispersion picks a scale and slope other than 1 in every channel
// (so every node is corrected); "nomatch" is the corrections without the re-chosen factor
// (Params.DispersionMatch). Figures: ms/op, and cpu-ms/op (the process's CPU time, which a
// loaded machine inflates less than wall time).
func BenchmarkPredictCorrected(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		g, tasks := benchCatalogue(n)
		pr, _ := NewPredictor(DefaultParams())
		preds, st, _ := pr.Predict(g, tasks, 21, State{})
		nodes := make([]int, 0, 512)
		for i := 0; len(nodes) < 512; i += n / 512 {
			nodes = append(nodes, i)
		}
		st.Baseline = Baselines(g, tasks, preds, nodes)
		after := append([]stats.Task(nil), tasks...)
		for k, i := range nodes {
			var grp stats.Group
			for j := range 8 {
				after[i].Add(float64((k+j)%3/2), 21, 21, true, &grp, stats.DefaultDecay)
			}
		}
		st.Dispersion = skewed(st)
		for _, c := range []struct {
			name      string
			on, match bool
		}{{"true", true, true}, {"nomatch", true, false}, {"false", false, false}} {
			p := DefaultParams()
			p.DispersionMatch = c.match
			if !c.on {
				p.DispersionMemory = 0
			}
			b.Run(fmt.Sprintf("N=%d/corrections=%s", n, c.name), func(b *testing.B) {
				pr, _ := NewPredictor(p)
				cpu0 := cpuTime()
				for b.Loop() {
					if _, _, err := pr.Predict(g, after, 22, st); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

// skewed is a dispersion state whose every channel prefers scale 1/2, slope 0.7 and η ½.
func skewed(st State) Dispersion {
	pref := func() *Likelihood {
		l := newLikelihood()
		for j, c := range dispersionGrid {
			if c == (correction{0.5, 0.7, 0.5, 1, 0}) {
				l.LL[j] = 10
			}
		}
		l.N = 100
		return l
	}
	d := Dispersion{Env: map[string]*Likelihood{}, Global: pref(), Rechose: pref()}
	for _, b := range st.Baseline {
		d.Env[b.Env] = pref()
	}
	return d
}

// cpuTime is the CPU time of the process so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
