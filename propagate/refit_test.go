package propagate

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/stats"
)

// refitCall predicts at round with the warm start ws and returns the prior's logits (a copy),
// the returned warm start and the fit's iterations.
func refitCall(t *testing.T, p Params, g *graph.Graph, tasks []stats.Task, round int64, ws WarmStart) ([]float64, WarmStart, int) {
	t.Helper()
	pr, err := NewPredictor(p)
	if err != nil {
		t.Fatal(err)
	}
	_, next, err := pr.Predict(g, tasks, round, State{Warm: ws})
	if err != nil {
		t.Fatal(err)
	}
	if !pr.prior.ok {
		t.Fatal("no feature prior fitted")
	}
	return append([]float64(nil), pr.prior.logit...), next.Warm, pr.FitIterations()
}

// A call keeps the fit of its warm start while the rollouts grew by less than PriorRefit of
// those it was fitted on (with PriorRefit 0, while none came): no iterations, the same warm
// start back, and every node's prior logit worked out from the start's values. Once they grew
// by PriorRefit or more (or fell, or the environments differ, or the start does not say what
// it was fitted on) it fits again.
func TestPriorKeptUntilTheEvidenceGrows(t *testing.T) {
	p := DefaultParams()
	p.DriftRate, p.RechosenRate, p.PriorRefit = 0, 0, 0.1
	g, tasks := benchCatalogue(6000)
	_, ws, iters := refitCall(t, p, g, tasks, 21, WarmStart{})
	if iters == 0 || ws.Rollouts != rolloutsOf(tasks) || ws.Rollouts == 0 {
		t.Fatalf("first fit: %d iterations, warm start on %d rollouts of %d", iters, ws.Rollouts, rolloutsOf(tasks))
	}
	rng := rand.New(rand.NewPCG(8, 9))
	grown := append([]stats.Task(nil), tasks...)
	for float64(rolloutsOf(grown)) < float64(ws.Rollouts)*1.05 {
		stepOn(grown, 22, rng)
	}
	logits, back, iters := refitCall(t, p, g, grown, 22, ws)
	if iters != 0 || !reflect.DeepEqual(back, ws) {
		t.Fatalf("5%% more rollouts: %d iterations, warm start moved: %v", iters, !reflect.DeepEqual(back, ws))
	}
	for i, l := range logits {
		if want := startLogit(g, ws, i); l != want {
			t.Fatalf("node %d: kept prior logit %g, the start's %g", i, l, want)
		}
	}
	q := p
	q.PriorRefit = 0 // the default: kept while no rollout came
	if _, back, iters := refitCall(t, q, g, tasks, 22, ws); iters != 0 || !reflect.DeepEqual(back, ws) {
		t.Fatalf("R = 0, no rollout since the fit: %d iterations, warm start moved: %v", iters, !reflect.DeepEqual(back, ws))
	}
	more := append([]stats.Task(nil), grown...)
	for float64(rolloutsOf(more)) < float64(ws.Rollouts)*1.1 {
		stepOn(more, 23, rng)
	}
	otherEnvs := ws
	otherEnvs.Envs = append(append([]string(nil), ws.Envs[:len(ws.Envs)-1]...), "zz-other")
	unknown := ws
	unknown.Rollouts = 0
	fewer := append([]stats.Task(nil), tasks...)
	for i := range fewer { // one rolled-out task's statistics gone, the graph the same
		if fewer[i].Rollouts > 0 {
			fewer[i] = stats.Task{}
			break
		}
	}
	for _, c := range []struct {
		name  string
		tasks []stats.Task
		ws    WarmStart
		p     float64
	}{
		{"10% more rollouts", more, ws, 0.1},
		{"fewer rollouts than the fit's", fewer, ws, 0.1},
		{"other environments", grown, otherEnvs, 0.1},
		{"fit's rollouts not known", grown, unknown, 0.1},
		{"R = 0, rollouts came", grown, ws, 0},
	} {
		q := p
		q.PriorRefit = c.p
		_, back, iters := refitCall(t, q, g, c.tasks, 24, c.ws)
		if iters == 0 || back.Rollouts != rolloutsOf(c.tasks) {
			t.Errorf("%s: %d iterations, warm start on %d rollouts of %d", c.name, iters, back.Rollouts, rolloutsOf(c.tasks))
		}
	}
}

// startLogit is the prior logit of node i under ws: its environment's value, the intercept and
// its features' values, summed in that order.
func startLogit(g *graph.Graph, ws WarmStart, i int) float64 {
	s := float64(ws.EnvVal[g.Nodes[i].Env]) + float64(ws.Intercept)
	for _, f := range g.Feat.Row(i) {
		for k, id := range ws.Feat {
			if id == f {
				s += float64(ws.FeatVal[k])
			}
		}
	}
	return s
}

// A warm start encoded by version 1 (no rollouts) decodes with Rollouts 0, which no call keeps.
func TestWarmStartVersion1(t *testing.T) {
	ws := WarmStart{Feat: []int32{2}, FeatVal: []float32{0.5}, Envs: []string{"a"}, EnvVal: []float32{1}, Intercept: -1, Rollouts: 300}
	data, err := ws.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	v1 := append([]byte{warmStartVersion1}, data[1:len(data)-2]...) // 300 is two bytes of uvarint
	var back WarmStart
	if err := back.UnmarshalBinary(v1); err != nil {
		t.Fatal(err)
	}
	want := ws
	want.Rollouts = 0
	if !reflect.DeepEqual(back, want) {
		t.Fatalf("version 1: %+v, want %+v", back, want)
	}
	if _, err := (WarmStart{Rollouts: -1}).MarshalBinary(); err == nil {
		t.Error("negative rollouts encoded")
	}
	huge := append(append([]byte(nil), data[:len(data)-2]...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)
	if err := back.UnmarshalBinary(huge); err == nil {
		t.Error("rollouts beyond int64 decoded")
	}
}

// A Predictor that kept a fit before gives, for the next call, what a fresh Predictor gives:
// when it keeps the same fit on the same graph (its prior worked out once), another fit of as
// many rollouts, or the same fit on another graph.
func TestKeptPriorIsAFunctionOfTheCall(t *testing.T) {
	p := DefaultParams()
	p.PriorRefit = 0.1
	g, tasks := benchCatalogue(3000)
	rng := rand.New(rand.NewPCG(1, 2))
	recs := make([]record.Task, g.Len())
	for i := range recs { // the same nodes and as many features, other words
		recs[i].Text = fmt.Sprintf("w%d w%d w%d x%d", rng.IntN(500), rng.IntN(500), rng.IntN(500), i%7)
	}
	g2, tasks2 := g.WithFeatures(graph.TextFeatures(recs)), tasks
	_, ws, _ := refitCall(t, p, g, tasks, 21, WarmStart{})
	other := cloneWarm(ws)
	other.FeatVal[len(other.FeatVal)/2] += 0.5
	otherEnv := cloneWarm(ws)
	otherEnv.EnvVal[0] -= 0.25
	st := State{Warm: ws}
	for _, c := range []struct {
		name string
		g    *graph.Graph
		tk   []stats.Task
		ws   WarmStart
	}{
		{"same fit, same graph", g, tasks, ws},
		{"another feature value", g, tasks, other},
		{"another environment value", g, tasks, otherEnv},
		{"another graph", g2, tasks2, ws},
		{"the first again", g, tasks, ws},
	} {
		used, _ := NewPredictor(p)
		if _, _, err := used.Predict(g, tasks, 22, st); err != nil { // keeps ws on g
			t.Fatal(err)
		}
		cs := State{Warm: c.ws}
		ws2 := c.ws
		ws2.Rollouts = rolloutsOf(c.tk)
		cs.Warm = ws2
		got, _, err := used.Predict(c.g, c.tk, 22, cs)
		if err != nil {
			t.Fatal(err)
		}
		got = clonePreds(got)
		fresh, _ := NewPredictor(p)
		want, _, err := fresh.Predict(c.g, c.tk, 22, cs)
		if err != nil {
			t.Fatal(err)
		}
		if used.FitIterations() != 0 {
			t.Fatalf("%s: the call fitted (%d iterations); the test wants a kept fit", c.name, used.FitIterations())
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the Predictor that kept a fit before predicts otherwise than a fresh one", c.name)
		}
	}
}
