package sim

import (
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// dapoPolicy is DAPO's dynamic sampling: random candidates are rolled out a batch at a time,
// groups with all rewards equal are dropped, and sampling goes on until B informative groups
// are in hand (or the chunk limit is hit). The dropped rollouts are spent all the same.
type dapoPolicy struct {
	random randomPolicy
	chunks int
}

func (p *dapoPolicy) Name() string    { return "dapo" }
func (p *dapoPolicy) Oversample() int { return p.chunks }

func (p *dapoPolicy) Choose(v *View) ([]int, error) {
	if p.random.pool == nil {
		p.random.pool = allTasks(len(v.World.Tasks))
	}
	return pickDistinct(v.Rand, p.random.pool, v.Size*p.chunks), nil
}

func (p *dapoPolicy) Observe(int, []Group) {}

// gresoPolicy is GRESO's pre-rollout filter on top of dynamic sampling: a task whose last
// groups were all solved (or all failed) z times in a row is skipped with probability
// 1 − (1 − q)^z, where q, one for easy and one for hard tasks, is adjusted each step so that
// the share of degenerate groups of that kind stays near a target.
type gresoPolicy struct {
	chunks       int
	target       float64 // target share of degenerate groups of each kind
	qEasy, qHard float64
	streak       map[int]int // > 0: all solved that many times in a row; < 0: all failed
	pool         []int
}

func newGreso(chunks int) *gresoPolicy {
	return &gresoPolicy{chunks: chunks, target: 0.125, qEasy: 0.5, qHard: 0.5, streak: map[int]int{}}
}

func (p *gresoPolicy) Name() string    { return "greso" }
func (p *gresoPolicy) Oversample() int { return p.chunks }

func (p *gresoPolicy) Choose(v *View) ([]int, error) {
	if p.pool == nil {
		p.pool = allTasks(len(v.World.Tasks))
	}
	want := v.Size * p.chunks
	out := make([]int, 0, want)
	for _, i := range v.Rand.Perm(len(p.pool)) {
		if len(out) == want {
			break
		}
		if !p.skip(v, p.pool[i]) {
			out = append(out, p.pool[i])
		}
	}
	return out, nil
}

func (p *gresoPolicy) skip(v *View, t int) bool {
	z := p.streak[t]
	q := p.qEasy
	if z < 0 {
		z, q = -z, p.qHard
	}
	if z == 0 {
		return false
	}
	return v.Rand.Float64() < 1-math.Pow(1-q, float64(z))
}

func (p *gresoPolicy) Observe(_ int, groups []Group) {
	easy, hard := 0, 0
	for _, g := range groups {
		switch {
		case g.Successes == g.Size:
			easy++
			p.streak[g.Task] = max(p.streak[g.Task], 0) + 1
		case g.Successes == 0:
			hard++
			p.streak[g.Task] = min(p.streak[g.Task], 0) - 1
		default:
			delete(p.streak, g.Task)
		}
	}
	n := float64(max(len(groups), 1))
	p.qEasy = adjust(p.qEasy, float64(easy)/n, p.target)
	p.qHard = adjust(p.qHard, float64(hard)/n, p.target)
}

// adjust moves a skip probability by 0.05 towards keeping share at target.
func adjust(q, share, target float64) float64 {
	if share > target {
		return min(q+0.05, 0.95)
	}
	return max(q-0.05, 0.05)
}

// moppsPolicy is MoPPS: a Beta posterior per task, updated with each group and decayed towards
// the prior (the policy moves on), a Thompson draw per task, and the B tasks whose draws are
// closest to 1/2.
type moppsPolicy struct {
	decay float64
	a, b  []float64
}

func (p *moppsPolicy) Name() string { return "mopps" }

func (p *moppsPolicy) Choose(v *View) ([]int, error) {
	n := len(v.World.Tasks)
	if p.a == nil {
		p.a, p.b = ones(n), ones(n)
	}
	type cand struct {
		t int
		d float64
	}
	cs := make([]cand, n)
	for t := range cs {
		cs[t] = cand{t, math.Abs(betaDraw(v.Rand, p.a[t], p.b[t]) - 0.5)}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].d < cs[j].d || cs[i].d == cs[j].d && cs[i].t < cs[j].t })
	out := make([]int, 0, v.Size)
	for _, c := range cs[:min(v.Size, n)] {
		out = append(out, c.t)
	}
	return out, nil
}

func (p *moppsPolicy) Observe(_ int, groups []Group) {
	for t := range p.a {
		p.a[t] = p.decay*p.a[t] + (1 - p.decay)
		p.b[t] = p.decay*p.b[t] + (1 - p.decay)
	}
	for _, g := range groups {
		p.a[g.Task] += float64(g.Successes)
		p.b[g.Task] += float64(g.Size - g.Successes)
	}
}

func ones(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

// banditPolicy is an environment-level bandit in the style of DUMP: each environment's value is
// the mean absolute advantage of its recent groups plus a UCB bonus; slots go to environments
// by a softmax of those values; tasks within an environment are drawn uniformly.
type banditPolicy struct {
	w      *World
	window int     // groups remembered per environment
	c      float64 // UCB weight
	temp   float64 // softmax temperature
	recent [][]float64
	pulls  []float64
	total  float64
}

func (p *banditPolicy) Name() string { return "env-bandit" }

func (p *banditPolicy) Choose(v *View) ([]int, error) {
	w := v.World
	if p.recent == nil {
		p.w = w
		p.recent, p.pulls = make([][]float64, len(w.Envs)), make([]float64, len(w.Envs))
	}
	weights := p.weights()
	out := make([]int, 0, v.Size)
	seen := map[int]bool{}
	for tries := 0; len(out) < v.Size && tries < 100*v.Size; tries++ {
		env := w.EnvTasks[drawIndex(v.Rand.Float64(), weights)]
		t := env[v.Rand.IntN(len(env))]
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, nil
}

// weights is the softmax of the UCB values; an environment never tried gets the largest.
func (p *banditPolicy) weights() []float64 {
	ucb := make([]float64, len(p.recent))
	hi := 0.0
	for e, r := range p.recent {
		if p.pulls[e] == 0 {
			ucb[e] = 2
		} else {
			ucb[e] = mean(r) + p.c*math.Sqrt(2*math.Log(p.total+1)/p.pulls[e])
		}
		hi = math.Max(hi, ucb[e])
	}
	sum := 0.0
	for e := range ucb {
		ucb[e] = math.Exp((ucb[e] - hi) / p.temp)
		sum += ucb[e]
	}
	for e := range ucb {
		ucb[e] /= sum
	}
	return ucb
}

func (p *banditPolicy) Observe(_ int, groups []Group) {
	for _, g := range groups {
		if p.w == nil {
			return
		}
		e := p.w.Tasks[g.Task].Env
		r := append(p.recent[e], 2*g.Spread())
		if len(r) > p.window {
			r = r[len(r)-p.window:]
		}
		p.recent[e] = r
		p.pulls[e]++
		p.total++
	}
}

func drawIndex(u float64, weights []float64) int {
	for i, w := range weights {
		if u < w {
			return i
		}
		u -= w
	}
	return len(weights) - 1
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// betaDraw is one draw from Beta(a, b).
func betaDraw(rng *rand.Rand, a, b float64) float64 {
	return distuv.Beta{Alpha: a, Beta: b, Src: rng}.Rand()
}
