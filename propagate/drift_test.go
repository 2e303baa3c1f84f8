package propagate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

// driftRun simulates one environment of 60 tasks whose success probability is before for
// rounds 1–5 (every task rolled out once) and after from round 6 on, when 6 tasks a round
// are rolled out in turn. It returns the mean absolute error of the predicted means of the
// tasks not rolled out in the last 5 rounds, at round 20, and the environment's offset.
func driftRun(t *testing.T, before, after float64, p Params) (staleErr, offset float64) {
	t.Helper()
	const n = 60
	nodes := make([]graph.Node, n)
	for i := range nodes {
		nodes[i] = graph.Node{Task: fmt.Sprintf("t%02d", i)}
	}
	g := graph.New([]string{"env"}, nodes, nil)
	tasks := make([]stats.Task, n)
	rng := rand.New(rand.NewPCG(5, 5))
	c := newChain(t, p)
	group := func(i int, round int64, prob float64) {
		var grp stats.Group
		for range 8 {
			tasks[i].Add(bernoulli(rng, prob), round, round, true, &grp, p.Decay)
		}
	}
	for round := int64(1); round <= 5; round++ {
		for i := range tasks {
			if int64(i)%5 == round-1 {
				group(i, round, before)
			}
		}
	}
	var preds []Prediction
	for round := int64(6); round <= 20; round++ {
		preds = c.call(t, g, tasks, round)
		for k := range 6 {
			group((int(round)*6+k)%n, round, after)
		}
	}
	preds = c.call(t, g, tasks, 21)
	var sum float64
	var stale int
	for i := range tasks {
		if tasks[i].Round < 16 {
			sum += math.Abs(preds[i].Mean - after)
			stale++
		}
	}
	return sum / float64(stale), c.st.Offsets["env"] + c.st.Rechosen
}

func TestDriftMovesStaleTasksTowardsTheNewPolicy(t *testing.T) {
	// the environment channel alone: every task of the run was rolled out before, so with the
	// re-chosen channel on, that channel would measure them all
	on, off := DefaultParams(), DefaultParams()
	on.RechosenRate, off.RechosenRate, off.DriftRate = 0, 0, 0
	errOn, offset := driftRun(t, 0.2, 0.7, on)
	errOff, _ := driftRun(t, 0.2, 0.7, off)
	t.Logf("stale tasks' error after the policy improved: with drift %.3f (offset %.2f), without %.3f", errOn, offset, errOff)
	if offset <= 0.3 {
		t.Errorf("rewards rose above the predictions, but the offset is %.3f", offset)
	}
	if errOn >= errOff {
		t.Errorf("drift correction should bring stale tasks closer to the new policy: %.3f with, %.3f without", errOn, errOff)
	}
}

func TestRechosenOffsetFollowsTasksRolledOutAgain(t *testing.T) {
	on, off := DefaultParams(), DefaultParams()
	on.DriftRate = 0 // the re-chosen channel alone
	off.DriftRate, off.RechosenRate = 0, 0
	errOn, offset := driftRun(t, 0.2, 0.7, on)
	errOff, none := driftRun(t, 0.2, 0.7, off)
	t.Logf("tasks rolled out again after the policy improved: error with the re-chosen offset %.3f (offset %.2f), without %.3f", errOn, offset, errOff)
	if offset <= 0.3 || none != 0 {
		t.Errorf("rewards of re-chosen tasks rose above the predictions: offset %.3f (want > 0.3), and %.3f with the channel off (want 0)", offset, none)
	}
	if errOn >= errOff {
		t.Errorf("the re-chosen offset should bring the tasks closer to the new policy: %.3f with, %.3f without", errOn, errOff)
	}
}

func TestNoDriftWhenThePolicyStands(t *testing.T) {
	envOnly := DefaultParams()
	envOnly.RechosenRate = 0
	for name, p := range map[string]Params{"both channels": DefaultParams(), "environment channel": envOnly} {
		_, offset := driftRun(t, 0.3, 0.3, p)
		if math.Abs(offset) > 0.25 {
			t.Errorf("%s: the policy did not change, yet the offset is %.3f", name, offset)
		}
	}
}

func TestDriftSurvivesANewGraph(t *testing.T) {
	// The offset is kept by environment name, and a grown graph is aligned by task.
	c := newChain(t, DefaultParams())
	g1 := graph.New([]string{"a"}, []graph.Node{{Task: "x"}, {Task: "z"}}, nil)
	tasks := make([]stats.Task, 2)
	c.call(t, g1, tasks, 1)
	for i := range tasks {
		var grp stats.Group
		for range 8 {
			tasks[i].Add(1, 1, 1, true, &grp, 0.9)
		}
	}
	g2 := graph.New([]string{"a"}, []graph.Node{{Task: "x"}, {Task: "y"}, {Task: "z"}}, nil)
	grown := []stats.Task{tasks[0], {}, tasks[1]}
	preds := c.call(t, g2, grown, 2)
	if c.st.Offsets["a"] <= 0 {
		t.Errorf("16 successes against a predicted 0.5: offset %.3f, want > 0", c.st.Offsets["a"])
	}
	if preds[1].Mean <= 0.5 {
		t.Errorf("the new task of an environment that did better than predicted: mean %.3f", preds[1].Mean)
	}
}
