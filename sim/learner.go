package sim

import "math"

// Group is the outcome of rolling one task out G times with binary rewards.
type Group struct {
	Task      int // index into World.Tasks
	Successes int // rewards equal to 1
	Size      int // G
}

// Degenerate reports whether all rewards of the group are equal: such a group has zero
// advantage and teaches a GRPO learner nothing.
func (g Group) Degenerate() bool { return g.Successes == 0 || g.Successes == g.Size }

// Spread is the standard deviation of the group's rewards, in [0, 0.5].
func (g Group) Spread() float64 {
	if g.Size == 0 {
		return 0
	}
	p := float64(g.Successes) / float64(g.Size)
	return math.Sqrt(p * (1 - p))
}

// Learner is the simulated policy being trained: a level per skill and a memory per training
// task. Its success probability on a task is logistic(κ·(mean level of the needed skills −
// difficulty) + memory of that task).
type Learner struct {
	w      *World
	level  []float64
	memory []float64 // per original training task (near-duplicates share it); never helps held-out tasks
	signal []float64 // scratch: this step's signal per skill
}

// NewLearner returns a learner at the world's starting skill levels.
func NewLearner(w *World) *Learner {
	return &Learner{
		w:      w,
		level:  append([]float64(nil), w.Init...),
		memory: make([]float64, len(w.Tasks)),
		signal: make([]float64, len(w.Init)),
	}
}

// P is the true success probability of training task t now.
func (l *Learner) P(t int) float64 {
	return l.prob(&l.w.Tasks[t], l.memory[l.w.root(t)])
}

// HeldOutP is the true success probability of held-out task h now.
func (l *Learner) HeldOutP(h int) float64 { return l.prob(&l.w.HeldOut[h], 0) }

func (l *Learner) prob(t *Task, memory float64) float64 {
	m := 0.0
	for _, s := range t.Needs {
		m += l.level[s]
	}
	m /= float64(len(t.Needs))
	return logistic(l.w.Scenario.Slope*(m-t.Difficulty) + memory)
}

func logistic(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// Eval is the held-out score: the mean success probability over each environment's held-out
// tasks, averaged with the same weight per environment.
func (l *Learner) Eval() float64 {
	total := 0.0
	for _, held := range l.w.EnvHeld {
		s := 0.0
		for _, h := range held {
			s += l.HeldOutP(h)
		}
		total += s / float64(len(held))
	}
	return total / float64(len(l.w.EnvHeld))
}

// EvalTasks is the held-out score with every task of the catalogue weighed the same: each
// environment's mean success probability over its held-out tasks, weighted by the size of its
// catalogue (training and held-out tasks), so that an environment holding most of the tasks
// counts for most of the score. It equals Eval when every environment is the same size.
func (l *Learner) EvalTasks() float64 {
	total, weight := 0.0, 0.0
	for e, held := range l.w.EnvHeld {
		s := 0.0
		for _, h := range held {
			s += l.HeldOutP(h)
		}
		n := float64(len(l.w.EnvTasks[e]) + len(held))
		total += n * s / float64(len(held))
		weight += n
	}
	return total / weight
}

// Rollout rolls training task t out g times at step; chunk tells apart the rollouts of one task
// in one step (a policy that over-samples). Rewards come from a hash of (seed, step, task,
// chunk, index), so that every policy of a seed sees the same luck for the same probability.
func (l *Learner) Rollout(t, step, chunk, g int) Group {
	p := l.P(t)
	k := 0
	for j := range g {
		if uniform(l.w.Seed, 1, uint64(step), uint64(t), uint64(chunk), uint64(j)) < p {
			k++
		}
	}
	return Group{Task: t, Successes: k, Size: g}
}

// Update applies one GRPO step trained on groups. A group's signal is its reward spread (a
// degenerate group gives none); the signal is split over the skills its task needs; a skill's
// gain saturates within a step (redundant groups add little) and fades as the skill rises
// above its start (diminishing returns); skills not trained drift back towards their start.
func (l *Learner) Update(step int, groups []Group) {
	lp := l.w.Scenario.Learn
	clear(l.signal)
	for _, g := range groups {
		sig := 2 * g.Spread()
		if sig == 0 {
			continue
		}
		needs := l.w.Tasks[g.Task].Needs
		for _, s := range needs {
			l.signal[s] += sig / float64(len(needs))
		}
		l.memory[l.w.root(g.Task)] += lp.TaskRate * sig
	}
	for s := range l.level {
		l.level[s] += l.skillChange(step, s, lp)
	}
}

func (l *Learner) skillChange(step, s int, lp LearnParams) float64 {
	seed := l.w.Seed
	drift := lp.Drift * normal(seed, 2, uint64(step), uint64(s))
	forget := -lp.Forget * (l.level[s] - l.w.Init[s])
	sig := l.signal[s]
	if sig == 0 {
		return drift + forget
	}
	gain := lp.Rate * lp.Sat * (1 - math.Exp(-sig/lp.Sat))
	gain *= math.Exp(-math.Max(0, l.level[s]-l.w.Init[s]) / lp.Ceiling)
	gain *= math.Max(0, 1+lp.Noise*normal(seed, 3, uint64(step), uint64(s)))
	return gain + drift + forget
}

// uniform is a counter-based random number in [0, 1) from its keys.
func uniform(keys ...uint64) float64 {
	h := uint64(0x9e3779b97f4a7c15)
	for _, k := range keys {
		h = mix(h ^ k)
	}
	return float64(h>>11) / (1 << 53)
}

// normal is a counter-based standard normal number from its keys (Box–Muller).
func normal(keys ...uint64) float64 {
	u1 := uniform(append(keys, 101)...)
	u2 := uniform(append(keys, 202)...)
	return math.Sqrt(-2*math.Log(1-u1)) * math.Cos(2*math.Pi*u2)
}

// mix is the splitmix64 finaliser.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
