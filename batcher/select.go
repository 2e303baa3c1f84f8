package batcher

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/internal/num"
	"github.com/envsched/envsched/internal/par"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/stats"
)

// Request is what the trainer asks for, already validated and defaulted by the caller
// (PROTOCOL.md sections 5 and 6).
type Request struct {
	Size         int      // tasks in the batch, >= 1
	GroupSize    int      // rollouts per task, >= 1 (used by ExploitInformative, ExploitSpread and ExploitLasting)
	Step         int64    // the training step the batch is for; staleness counts from it
	Envs         []string // only these environments; nil means all
	ExcludeEnvs  []string // never these environments
	AllowRepeats bool     // repeat tasks when fewer are eligible than Size
	Seed         uint64   // the seed of every random choice and tie-break
	// Retired, when not nil, marks (indexed like the graph's nodes) the tasks never to choose:
	// those the latest catalogue no longer lists. They still lend their history to others.
	Retired []bool
	// Loads, when not nil, are the neighbour loads of the transfer factor (see Params.Transfer),
	// indexed like the graph's nodes, as neighbourLoad works them out from preds:
	// propagate.Predictor.Loads, taken in the prediction's own pass over the edges. nil works
	// them out here.
	Loads []float64
}

// Pick is one chosen task. Score = Exploit + Coverage − Penalty, where Exploit is in [0, 1],
// Coverage is CoverageWeight times a coverage value in [0, 1], and Penalty is SimPenalty times
// the largest similarity to a task chosen before it in the same round, plus Overlap times the
// share of its words those tasks hold (see Params.Overlap).
type Pick struct {
	Node     int     // index into the graph's nodes
	Score    float64 // the gain it was chosen by
	Exploit  float64
	Coverage float64
	Penalty  float64
	Reason   string // a few words on why
	Random   bool   // drawn uniformly, not chosen by score
	Repeat   bool   // a repeat: fewer tasks were eligible than Size
}

// ForCoverage reports whether selection chose the task mainly for coverage: not drawn at
// random, and its coverage outweighed its exploitation value.
func (p Pick) ForCoverage() bool { return !p.Random && p.Coverage > p.Exploit }

// Quota is the share of one environment in a batch.
type Quota struct {
	Eligible int     // eligible tasks of the environment
	Share    float64 // its share of a round before rounding: value share smoothed towards eligible^QuotaSize (uniform by default)
	Min, Max int     // bounds of one round's quota before they give way to capacity
	Slots    int     // tasks of the environment in the batch, over all rounds
}

// Batch is the result of Select. Picks are in the order chosen: per round the greedy picks,
// best first, then the random slots; a round is the whole batch unless repeats are needed.
type Batch struct {
	Picks    []Pick
	Quotas   []Quota // indexed like graph.Graph.Envs
	Eligible int     // tasks that could be chosen
}

// Select chooses a batch. preds and tasks are indexed like g.Nodes. It is deterministic: the
// same inputs and req.Seed give the same batch. Cost: O(N + E) to value the tasks and
// O((Size + updates)·log N) for the lazy greedy, where updates are the neighbours of chosen
// tasks whose penalty grew.
func Select(g *graph.Graph, preds []propagate.Prediction, tasks []stats.Task, req Request, p Params) (Batch, error) {
	return new(Selector).Select(g, preds, tasks, req, p)
}

// retiredIn counts the retired tasks of the allowed environments, for the error that says why
// too few tasks are eligible.
func retiredIn(g *graph.Graph, req Request, allowed []bool) int {
	n := 0
	for i, nd := range g.Nodes {
		if allowed[nd.Env] && req.Retired != nil && req.Retired[i] {
			n++
		}
	}
	return n
}

// Selector is Select with buffers kept between calls, so that a process answering request
// after request over a large graph does not allocate per node each time. The zero value is
// ready; a Selector is not safe for concurrent use.
type Selector struct {
	own    []float64
	stales []float64
	score  []float64
	pen    []float32
	taken  []bool
	elig   []int32
	items  []entry
	words  *wordWeights // the word weights of the last graph's features, when Overlap is on
}

// Select is the package function Select, reusing the Selector's buffers.
func (sel *Selector) Select(g *graph.Graph, preds []propagate.Prediction, tasks []stats.Task, req Request, p Params) (Batch, error) {
	if err := check(g, preds, tasks, req, p); err != nil {
		return Batch{}, err
	}
	allowed, err := allowedEnvs(g, req)
	if err != nil {
		return Batch{}, err
	}
	s := newSelector(sel, g, preds, tasks, req, p, allowed)
	if len(s.elig) < req.Size && !req.AllowRepeats || len(s.elig) == 0 {
		return Batch{}, &TooFewTasksError{Size: req.Size, Eligible: len(s.elig), Retired: retiredIn(g, req, allowed)}
	}
	for left := req.Size; left > 0; {
		k := min(left, len(s.elig))
		s.round(k, left < req.Size)
		left -= k
	}
	return Batch{Picks: s.picks, Quotas: s.quotas, Eligible: len(s.elig)}, nil
}

func check(g *graph.Graph, preds []propagate.Prediction, tasks []stats.Task, req Request, p Params) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if len(preds) != g.Len() || len(tasks) != g.Len() {
		return fmt.Errorf("select: %d predictions and %d task statistics for %d graph nodes", len(preds), len(tasks), g.Len())
	}
	if g.Len() == 0 {
		return ErrEmptyCatalogue
	}
	if req.Retired != nil && len(req.Retired) != g.Len() {
		return fmt.Errorf("select: %d retired marks for %d graph nodes", len(req.Retired), g.Len())
	}
	if req.Loads != nil && len(req.Loads) != g.Len() {
		return fmt.Errorf("select: %d neighbour loads for %d graph nodes", len(req.Loads), g.Len())
	}
	if req.Size < 1 {
		return &RequestError{Field: "size", Msg: fmt.Sprintf("is %d, want at least 1", req.Size)}
	}
	if req.GroupSize < 1 {
		return &RequestError{Field: "group_size", Msg: fmt.Sprintf("is %d, want at least 1", req.GroupSize)}
	}
	return nil
}

// allowedEnvs applies envs and exclude_envs. A name in envs that is not an environment is an
// error (the trainer asked for tasks that do not exist); a name in exclude_envs that is not one
// is an error when an environment reads as it (lookAlike), and otherwise excludes nothing (PROTOCOL.md: "never these environments" holds of an environment with no
// tasks, and a trainer that always excludes one, say before its tasks are in the catalogue or
// after they are retired, would otherwise get only error files).
func allowedEnvs(g *graph.Graph, req Request) ([]bool, error) {
	allowed := make([]bool, len(g.Envs))
	for e := range allowed {
		allowed[e] = req.Envs == nil
	}
	for _, name := range req.Envs {
		e, ok := slices.BinarySearch(g.Envs, name)
		if !ok {
			return nil, &UnknownEnvError{Field: "envs", Env: name, Known: g.Envs, Like: lookAlike(name, g.Envs)}
		}
		allowed[e] = true
	}
	for _, name := range req.ExcludeEnvs {
		if e, ok := slices.BinarySearch(g.Envs, name); ok {
			allowed[e] = false
		} else if like := lookAlike(name, g.Envs); like != "" {
			// Not an environment, but one reads as it: excluding nothing would hand the trainer
			// the tasks of the environment it meant to exclude.
			return nil, &UnknownEnvError{Field: "exclude_envs", Env: name, Known: g.Envs, Like: like}
		}
	}
	return allowed, nil
}

// selector is the state of one Select call.
type selector struct {
	g     *graph.Graph
	preds []propagate.Prediction
	tasks []stats.Task
	req   Request
	p     Params
	rng   *rand.Rand

	elig     []int32   // eligible nodes, ascending
	score    []float64 // per node; meaningful for eligible ones
	envSeen  []bool    // per environment: some task has rollouts
	envValue []float64 // per environment: mean score × tasks it could give
	quotas   []Quota
	active   []int // environments with eligible tasks, ascending: a round's work is over these alone

	quota []int  // per environment: slots of the current round (meaningful for active ones)
	heaps []heap // per environment: candidates of the current round (meaningful for active ones)
	// per environment, for the current round (meaningful for active ones): its eligible
	// nodes' range in elig; whether its heap is pruned, and then the best candidate left out
	runs    [][2]int
	pruned  []bool
	leftOut []entry
	todo    []int // the environments whose heaps a round makes

	own     []float64 // per node: its decayed own evidence, when Transfer is on (read by neighbourLoad)
	stales  []float64 // staleness by rounds since last chosen, below staleMemo (see staleness)
	pen     []float32 // per node: largest similarity to a task chosen this round
	taken   []bool    // per node: chosen this round
	touched []int32   // nodes whose pen or taken this round set: a round resets these alone
	items   []entry   // backing array of the candidate heaps
	picks   []Pick

	chosen []int64 // per environment: times its tasks were chosen before this batch, once MinCredit needs it

	horizon int           // LastingHorizon of the statistics, when Exploit is ExploitLasting
	matched *matchedTable // when Exploit or ExploitGraded is ExploitMatched

	words        *wordWeights // when Overlap is on and the graph has features, else nil
	wordCount    []int32      // per word: taken tasks of the round that hold it
	wordsTouched []int32      // words whose count the round set: a round resets these alone
}

func newSelector(sel *Selector, g *graph.Graph, preds []propagate.Prediction, tasks []stats.Task, req Request, p Params, allowed []bool) *selector {
	n := g.Len()
	sel.score, sel.pen, sel.taken = resize(sel.score, n), resize(sel.pen, n), resize(sel.taken, n)
	s := &selector{
		g: g, preds: preds, tasks: tasks, req: req, p: p,
		rng:    rand.New(rand.NewPCG(req.Seed, req.Seed^0x5eed5eed5eed5eed)),
		score:  sel.score,
		quotas: make([]Quota, len(g.Envs)),
		pen:    sel.pen,
		taken:  sel.taken,
		picks:  make([]Pick, 0, req.Size),
	}
	s.envSeen = envsSeen(g, tasks)
	if p.Exploit == ExploitLasting || p.ExploitGraded == ExploitLasting {
		s.horizon = LastingHorizon(tasks)
	}
	if p.Exploit == ExploitMatched || p.ExploitGraded == ExploitMatched {
		s.matched = newMatchedTable(req.GroupSize)
	}
	if p.Transfer > 0 && req.Loads == nil {
		// One pass (on every CPU), so that the neighbours' loads read 8 bytes a neighbour
		// instead of a whole Prediction each.
		sel.own = resize(sel.own, n)
		own := sel.own
		par.Ranges(n, valueChunk, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				own[i] = preds[i].Own
			}
		})
		s.own = own
	}
	if p.Overlap > 0 && g.Feat != nil {
		sel.words = weightsFor(sel.words, g)
		s.words = sel.words
		s.wordCount = make([]int32, g.Feat.Dim)
	}
	sel.stales = staleTable(sel.stales, p.StaleRounds)
	s.stales = sel.stales
	s.elig = sel.elig[:0]
	for i, nd := range g.Nodes {
		if allowed[nd.Env] && (req.Retired == nil || !req.Retired[i]) {
			s.elig = append(s.elig, int32(i))
		}
	}
	sel.elig = s.elig
	sel.items = resize(sel.items, len(s.elig))
	s.items = sel.items
	clear(s.pen) // the buffers may hold a previous call's values
	clear(s.taken)
	s.value()
	for e, q := range s.quotas {
		if q.Eligible > 0 {
			s.active = append(s.active, e)
		}
	}
	s.quota = make([]int, len(g.Envs))
	s.heaps = make([]heap, len(g.Envs))
	s.runs = make([][2]int, len(g.Envs))
	s.pruned = make([]bool, len(g.Envs))
	s.leftOut = make([]entry, len(g.Envs))
	return s
}

// envsSeen reports per environment whether some task has rollouts. Nodes are sorted by
// environment, so the scan of an environment stops at its first task with rollouts.
func envsSeen(g *graph.Graph, tasks []stats.Task) []bool {
	seen := make([]bool, len(g.Envs))
	for i := 0; i < len(tasks); i++ {
		e := g.Nodes[i].Env
		if tasks[i].Rollouts == 0 {
			continue
		}
		seen[e] = true
		for i+1 < len(tasks) && g.Nodes[i+1].Env == e {
			i++
		}
	}
	return seen
}

// key is the seeded tie-break of node i.
func (s *selector) key(i int32) uint64 { return mix(s.req.Seed ^ uint64(i)*0x9e3779b97f4a7c15) }

func resize[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// valueChunk is the number of eligible nodes value scores in one piece; pieces are fixed and
// their sums merged in order, so that no number depends on the number of CPUs.
const valueChunk = 1 << 14

// envSum is one environment's sum of scores and count of eligible tasks within a piece.
type envSum struct {
	score float64
	n     int
}

// value scores every eligible node and sums the scores per environment.
func (s *selector) value() {
	parts := make([][]envSum, (len(s.elig)+valueChunk-1)/valueChunk)
	par.Ranges(len(parts), 2, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			parts[c] = s.valueChunk(c*valueChunk, min(len(s.elig), (c+1)*valueChunk))
		}
	})
	sum := make([]float64, len(s.g.Envs))
	for c, part := range parts {
		first := int(s.g.Nodes[s.elig[c*valueChunk]].Env)
		for k, es := range part {
			sum[first+k] += es.score
			s.quotas[first+k].Eligible += es.n
		}
	}
	s.envValue = make([]float64, len(s.g.Envs))
	for e, q := range s.quotas {
		if q.Eligible > 0 {
			s.envValue[e] = sum[e] / float64(q.Eligible) * s.sizeWeight(q.Eligible)
		}
	}
}

// sizeWeight is what an environment's mean score is multiplied by for its value:
// min(n, batch size)^(1−α) × n^α for n eligible tasks and α = QuotaSize.
func (s *selector) sizeWeight(n int) float64 {
	a := s.p.QuotaSize
	if a == 0 {
		return float64(min(n, s.req.Size))
	}
	return math.Pow(float64(min(n, s.req.Size)), 1-a) * math.Pow(float64(n), a)
}

// valueChunk scores the eligible nodes elig[lo:hi] and returns the sums of the environments
// from that of elig[lo] to that of elig[hi−1] (nodes are sorted by environment).
func (s *selector) valueChunk(lo, hi int) []envSum {
	first := s.g.Nodes[s.elig[lo]].Env
	sums := make([]envSum, s.g.Nodes[s.elig[hi-1]].Env-first+1)
	var v values
	for _, i := range s.elig[lo:hi] {
		s.valuesTo(&v, int(i))
		s.score[i] = v.exploit + s.p.CoverageWeight*v.coverage()
		es := &sums[s.g.Nodes[i].Env-first]
		es.score += s.score[i]
		es.n++
	}
	return sums
}

// values are the parts of a node's score.
type values struct {
	exploit            float64 // in [0, 1]
	uncertain, stale   float64 // in [0, 1]
	novel              float64 // 0.5 for a task never rolled out, 0.5 more for a new environment
	chosenBefore       bool
	roundsSinceChosen  int64
	neverTried, newEnv bool
	borrowed           bool
	// measure names, in the pick's reason, what exploit valued: Params.ExploitGraded for a task
	// of an environment with graded rewards; for a 0/1 task always ExploitVariance, whatever
	// Params.Exploit (for 0/1 rewards every measure ranks by the same p(1 − p), and the reasons
	// of 0/1 answers stay as they were)
	measure Exploit
}

// coverage is the coverage value in [0, 1]: half uncertainty, a quarter staleness, a quarter
// novelty.
func (v values) coverage() float64 { return 0.5*v.uncertain + 0.25*v.stale + 0.25*v.novel }

func (s *selector) values(i int) values {
	var v values
	s.valuesTo(&v, i)
	return v
}

// valuesTo sets *v to values(i). The pass over every eligible node fills one v in place: a
// struct returned by value was copied back in 16-byte loads of what had just been stored 8
// bytes at a time, a stalled load on every node.
func (s *selector) valuesTo(v *values, i int) {
	pr, t := &s.preds[i], &s.tasks[i]
	*v = values{
		uncertain:  s.p.UncertainCount / (s.p.UncertainCount + pr.Own + pr.Borrowed),
		stale:      1,
		neverTried: t.Rollouts == 0,
		newEnv:     !s.envSeen[s.g.Nodes[i].Env],
		borrowed:   pr.Borrowed >= 1,
	}
	exploit := s.p.Exploit
	if pr.Graded() {
		exploit, v.measure = s.p.ExploitGraded, s.p.ExploitGraded
	}
	switch exploit {
	case ExploitInformative:
		v.exploit = clamp01(1 - pr.PDegenerate(s.req.GroupSize))
	case ExploitSpread:
		v.exploit = ExpectedSpread(pr, s.req.GroupSize)
	case ExploitLasting:
		v.exploit = ExpectedLasting(pr, s.req.GroupSize, s.horizon)
	case ExploitMatched:
		v.exploit = s.matched.value(pr.PDegenerate(s.req.GroupSize))
	default:
		v.exploit = clamp01(4 * pr.Var)
	}
	if d := s.p.Transfer; d > 0 {
		v.exploit *= 1 - d + d*float64(s.req.GroupSize)/(float64(s.req.GroupSize)+s.neighbourLoad(i))
	}
	if f := s.p.Fresh; f > 0 && t.LastStep > 0 {
		v.exploit *= 1 - f*s.staleness(max(0, s.req.Step-t.LastStep-1))
	}
	if t.LastChosen > 0 {
		v.chosenBefore = true
		v.roundsSinceChosen = max(0, s.req.Step-t.LastChosen)
		v.stale = s.staleness(v.roundsSinceChosen)
	}
	if !v.neverTried && s.p.RetryCoverage != 1 {
		v.uncertain *= s.p.RetryCoverage
		v.stale *= s.p.RetryCoverage
	}
	if v.neverTried {
		v.novel += 0.5
	}
	if v.newEnv {
		v.novel += 0.5
	}
	// Both are in [0, 1] for every prediction propagate makes; a prediction that is not a number
	// (a damaged input no check caught: NaN evidence) is valued as nothing, so that no score,
	// environment value or answer holds NaN.
	v.exploit, v.uncertain = clamp01(v.exploit), clamp01(v.uncertain)
}

// staleMemo is how many round counts the staleness table holds: a request's nodes were last
// chosen at a few hundred distinct steps at most, most of them recent.
const staleMemo = 512

// staleTable returns tab (reused when it holds τ's values) filled with the staleness of 0 to
// staleMemo−1 rounds for τ = tau, and τ itself at the end.
func staleTable(tab []float64, tau float64) []float64 {
	if len(tab) == staleMemo+1 && tab[staleMemo] == tau {
		return tab
	}
	tab = resize(tab, staleMemo+1)
	for r := range staleMemo {
		tab[r] = stalenessOf(int64(r), tau)
	}
	tab[staleMemo] = tau
	return tab
}

// stalenessOf is 1 − exp(−r/τ), the staleness of a task last chosen r rounds ago.
func stalenessOf(r int64, tau float64) float64 { return 1 - math.Exp(-float64(r)/tau) }

// staleness is stalenessOf(r, StaleRounds), from the table when r is in it (the same number:
// the table holds what the function gives).
func (s *selector) staleness(r int64) float64 {
	if r >= 0 && r < staleMemo {
		return s.stales[r]
	}
	return stalenessOf(r, s.p.StaleRounds)
}

// neighbourLoad is the similarity-weighted mean decayed rollouts of node i's neighbours: how
// much the tasks around it have been trained lately (0 with no neighbours).
func (s *selector) neighbourLoad(i int) float64 {
	if s.req.Loads != nil {
		return s.req.Loads[i]
	}
	var sum, w float64
	for _, e := range s.g.Neighbors(i) {
		sum += float64(e.Sim) * s.own[e.To]
		w += float64(e.Sim)
	}
	if w == 0 {
		return 0
	}
	return sum / w
}

// mix is the splitmix64 finaliser: a seeded, well spread tie-break per node.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

func clamp01(x float64) float64 { return num.Clamp01(x) }
