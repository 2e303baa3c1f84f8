package sim

import (
	"container/heap"
	"math"
)

// oraclePolicy knows every true success probability and every task's skills. It fills the
// batch greedily by expected learning signal, 2·sqrt(p(1−p)) times the chance that the group
// is not degenerate, discounted by how much signal the batch already puts on the task's
// skills (the learner's per-step saturation). It is a reference, not a method a trainer
// could run.
type oraclePolicy struct{}

func (oraclePolicy) Name() string { return "oracle" }

func (oraclePolicy) Observe(int, []Group) {}

func (oraclePolicy) Choose(v *View) ([]int, error) {
	w := v.World
	sat := w.Scenario.Learn.Sat
	h := make(gainHeap, 0, len(w.Tasks))
	for t := range w.Tasks {
		p := v.Truth(t)
		val := 2 * math.Sqrt(p*(1-p)) * (1 - math.Pow(p, float64(v.Group)) - math.Pow(1-p, float64(v.Group)))
		h = append(h, gainItem{task: t, base: val, gain: val})
	}
	heap.Init(&h)
	load := make([]float64, len(w.Init))
	out := make([]int, 0, v.Size)
	for len(out) < v.Size && h.Len() > 0 {
		top := heap.Pop(&h).(gainItem)
		fresh := top.base * discount(load, w.Tasks[top.task].Needs, sat)
		if h.Len() > 0 && fresh < h[0].gain {
			top.gain = fresh
			heap.Push(&h, top)
			continue
		}
		out = append(out, top.task)
		for _, s := range w.Tasks[top.task].Needs {
			load[s] += top.base / float64(len(w.Tasks[top.task].Needs))
		}
	}
	return out, nil
}

// discount is the mean over a task's skills of how much of a new signal still counts, given
// the signal the batch already carries for each skill.
func discount(load []float64, needs []int, sat float64) float64 {
	d := 0.0
	for _, s := range needs {
		d += math.Exp(-load[s] / sat)
	}
	return d / float64(len(needs))
}

type gainItem struct {
	task       int
	base, gain float64
}

// gainHeap is a max-heap by gain, ties by task index, for the lazy greedy.
type gainHeap []gainItem

func (h gainHeap) Len() int { return len(h) }
func (h gainHeap) Less(i, j int) bool {
	return h[i].gain > h[j].gain || h[i].gain == h[j].gain && h[i].task < h[j].task
}
func (h gainHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *gainHeap) Push(x any)   { *h = append(*h, x.(gainItem)) }
func (h *gainHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
