package propagate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
)

// slotWorld is one environment of 900 tasks: two of every three succeed half the time, the
// third nearly always or nearly never. Each round rolls out 20 untried tasks of the first
// kind, as a selection that prefers informative tasks would, and 4 untried tasks of the
// second kind as random slots: the environment's correction is fitted mostly on the first,
// and so says little of the second.
type slotWorld struct {
	g      *graph.Graph
	tasks  []stats.Task
	p      []float64
	rng    *rand.Rand
	even   []int // untried tasks of the first kind, in order
	random []int // untried tasks of the second kind, in order
}

func newSlotWorld() *slotWorld {
	w := &slotWorld{rng: rand.New(rand.NewPCG(7, 1))}
	var nodes []graph.Node
	for i := range 900 {
		nodes = append(nodes, graph.Node{Env: 0, Task: fmt.Sprintf("t%03d", i)})
		p := 0.5
		if i%3 == 2 {
			p = []float64{0.02, 0.98}[(i/3)%2]
			w.random = append(w.random, i)
		} else {
			w.even = append(w.even, i)
		}
		w.p = append(w.p, p)
	}
	w.g = graph.New([]string{"mixed"}, nodes, nil)
	w.tasks = make([]stats.Task, len(nodes))
	return w
}

func (w *slotWorld) round(round int64) {
	for _, i := range w.even[:20] {
		w.group(i, round)
	}
	for _, i := range w.random[:4] {
		w.group(i, round)
	}
	w.even, w.random = w.even[20:], w.random[4:]
}

func (w *slotWorld) group(i int, round int64) {
	var grp stats.Group
	for range 8 {
		w.tasks[i].Add(bernoulli(w.rng, w.p[i]), round, round, true, &grp, stats.DefaultDecay)
	}
}

// runSlots runs the slot world for 15 rounds, the baselines of the second kind marked
// random when mark, and returns the mean chance of a degenerate group that Pick gives
// the untried tasks of the second kind and that their channel's prediction gives.
func runSlots(t *testing.T, p Params, mark bool) (slot, channel float64) {
	t.Helper()
	w := newSlotWorld()
	c := newChain(t, p)
	var preds []Prediction
	for round := int64(1); round <= 16; round++ {
		preds = c.call(t, w.g, w.tasks, round)
		for i := range c.st.Baseline {
			c.st.Baseline[i].Random = mark && i%3 == 2
		}
		if round < 16 {
			w.round(round)
		}
	}
	for _, i := range w.random {
		slot += c.pr.Pick(c.st, preds[i], false, true).PDeg
		channel += preds[i].PDeg
	}
	n := float64(len(w.random))
	return slot / n, channel / n
}

// TestRandomSlotIsPredictedByRandomSlots: random slots drawn from the always-or-never tasks
// of an environment whose correction is fitted mostly on coin flips are predicted, by what
// random slots measured, far closer to how degenerate they are (0.85) than their channel's
// prediction (under 0.1); shrunk towards the channel while random slots are few, not all the
// way. Without random slots marked, or with the correction off, Pick changes
// nothing.
func TestRandomSlotIsPredictedByRandomSlots(t *testing.T) {
	truth := math.Pow(0.98, 8) + math.Pow(0.02, 8)
	slot, channel := runSlots(t, DefaultParams(), true)
	t.Logf("random slots' chance of a degenerate group: %.3f by random slots, %.3f by their channel, truth %.3f", slot, channel, truth)
	if math.Abs(channel-truth) < 0.5 {
		t.Fatalf("the channel predicts %.3f: the test needs it far from the truth %.3f", channel, truth)
	}
	if math.Abs(slot-truth) > math.Abs(channel-truth)/2 {
		t.Errorf("random slots predicted %.3f degenerate, their channel %.3f, truth %.3f: want less than half the channel's error",
			slot, channel, truth)
	}
	if slot, channel := runSlots(t, DefaultParams(), false); slot != channel {
		t.Errorf("no random slot measured: Pick gives %v, the channel %v", slot, channel)
	}
	off := DefaultParams()
	off.DispersionMemory = 0
	if slot, channel := runSlots(t, off, true); slot != channel {
		t.Errorf("correction off: Pick gives %v, the channel %v", slot, channel)
	}
}

// TestPickerIsPick: one Picker, asked for the picks of an answer in any order and of every
// kind, gives what Pick gives each of them alone, with every kind's correction measured.
func TestPickerIsPick(t *testing.T) {
	w := newSlotWorld()
	c := newChain(t, DefaultParams())
	var preds []Prediction
	for round := int64(1); round <= 12; round++ {
		preds = c.call(t, w.g, w.tasks, round)
		for i := range c.st.Baseline {
			c.st.Baseline[i].Random = i%3 == 2
		}
		w.round(round)
	}
	st := c.st
	if st.Dispersion.Random == nil || st.Dispersion.Global == nil {
		t.Fatalf("dispersion %+v: want random slots and the channel measured", st.Dispersion)
	}
	st.Dispersion.Rechose, st.Dispersion.RechosenFactor = st.Dispersion.Global, 1.7 // the re-chosen kind too
	pick := c.pr.Picker(st)
	rng := rand.New(rand.NewPCG(5, 5))
	changed := 0
	for range 4 * len(preds) {
		i, tried, random := rng.IntN(len(preds)), rng.IntN(2) == 0, rng.IntN(2) == 0
		got, want := pick(preds[i], tried, random), c.pr.Pick(st, preds[i], tried, random)
		if got != want {
			t.Fatalf("task %d tried %v random %v: Picker %+v, Pick %+v", i, tried, random, got, want)
		}
		if got != preds[i] {
			changed++
		}
	}
	if changed == 0 {
		t.Fatal("no pick corrected: the test shows nothing")
	}
}
