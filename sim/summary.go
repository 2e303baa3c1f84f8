package sim

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"

	"gonum.org/v1/gonum/stat"
)

// ReportSteps are the steps at which tables show the held-out score.
var reportSteps = []int{10, 20, 40, 80, 120}

// ReportSteps returns the steps at which tables show the held-out score, capped to steps.
func ReportSteps(steps int) []int {
	var out []int
	for _, s := range reportSteps {
		if s <= steps {
			out = append(out, s)
		}
	}
	if len(out) == 0 || out[len(out)-1] != steps {
		out = append(out, steps)
	}
	return out
}

// Interval is a median across seeds with its 95% bootstrap interval.
type Interval struct {
	Median float64 `json:"median"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
}

// PolicySummary is one policy across seeds. Rollout counts to the target are +Inf for a seed
// that never reached it.
type PolicySummary struct {
	Policy          string           `json:"policy"`
	ScoreAt         map[int]Interval `json:"score_at"`                // held-out score after the step
	Best            Interval         `json:"best"`                    // best held-out score over all steps
	Degenerate      Interval         `json:"degenerate"`              // share of all rolled-out groups that were degenerate
	Degenerate10    Interval         `json:"degenerate_10"`           // the same over the first 10 steps
	Rollouts        Interval         `json:"rollouts"`                // rollouts spent in the whole run
	ToTarget        Interval         `json:"to_target"`               // rollouts until the score first reached random's final score
	Reached         float64          `json:"reached"`                 // share of seeds that reached it
	RatioToEnvsched Interval         `json:"ratio_to_envsched"`       // ToTarget / envsched's ToTarget, per seed
	BeatsRandomBest Share            `json:"beats_random_best_at_40"` // share of seeds whose step-40 score beats random's best
	// TaskScoreAt, TaskBest and TaskBeatsRandomBest are ScoreAt, Best and BeatsRandomBest with
	// the held-out score that weighs every catalogue task the same (Trace.TaskScore) instead of
	// every environment.
	TaskScoreAt         map[int]Interval `json:"task_score_at"`
	TaskBest            Interval         `json:"task_best"`
	TaskBeatsRandomBest Share            `json:"task_beats_random_best_at_40"`
	// EnvschedWins is, per measure, the share of seeds on which envsched did strictly better
	// than this policy on the same seed (nil without envsched).
	EnvschedWins map[string]Share `json:"envsched_wins,omitempty"`
}

// Summary is the comparison's table.
type Summary struct {
	Steps    []int           `json:"steps"`
	Policies []PolicySummary `json:"policies"`
	// RandomBest is the median over seeds of random's best held-out score (NaN without random).
	RandomBest Interval `json:"random_best"`
	// RandomTaskBest is the same with the per-task held-out score (Trace.TaskScore).
	RandomTaskBest Interval `json:"random_task_best"`
	// Calibration is, per policy that predicts degenerate groups, its calibration pooled
	// over seeds, in the order of the policies.
	Calibration []PolicyCalibration `json:"calibration,omitempty"`
}

// Summarize computes medians and intervals across seeds. Targets and ratios need random (and
// envsched for the ratio) among the policies; without them those fields are NaN.
func Summarize(cfg Config, traces map[string][]Trace) Summary {
	sum := Summary{Steps: ReportSteps(cfg.Steps), RandomBest: nanInterval(), RandomTaskBest: nanInterval()}
	random := traces["random"]
	if random != nil {
		sum.RandomBest = bootstrapMedian(mapTraces(random, best), cfg.SeedBase)
		sum.RandomTaskBest = bootstrapMedian(mapTraces(random, taskBest), cfg.SeedBase)
	}
	var envTo []float64
	if es := traces["envsched"]; es != nil && random != nil {
		envTo = toTarget(es, random)
	}
	for _, name := range cfg.Policies {
		ps := summarizePolicy(name, traces[name], random, envTo, sum.Steps, cfg.SeedBase)
		if es := traces["envsched"]; es != nil {
			ps.EnvschedWins = pairedWins(es, traces[name], random)
		}
		sum.Policies = append(sum.Policies, ps)
		if c, ok := poolCalibration(traces[name]); ok {
			sum.Calibration = append(sum.Calibration, PolicyCalibration{Policy: name, Cells: c, Retries: poolRetries(traces[name]),
				Steps: poolSteps(traces[name])})
		}
	}
	return sum
}

func summarizePolicy(name string, trs, random []Trace, envTo []float64, steps []int, seed uint64) PolicySummary {
	ps := PolicySummary{Policy: name, ScoreAt: map[int]Interval{}, ToTarget: nanInterval(),
		RatioToEnvsched: nanInterval(), BeatsRandomBest: Share(math.NaN()),
		TaskScoreAt: map[int]Interval{}, TaskBeatsRandomBest: Share(math.NaN())}
	for _, s := range append([]int{0}, steps...) {
		ps.ScoreAt[s] = bootstrapMedian(mapTraces(trs, func(t Trace) float64 { return t.Score[s] }), seed)
		ps.TaskScoreAt[s] = bootstrapMedian(mapTraces(trs, func(t Trace) float64 { return t.TaskScore[s] }), seed)
	}
	ps.Best = bootstrapMedian(mapTraces(trs, best), seed)
	ps.TaskBest = bootstrapMedian(mapTraces(trs, taskBest), seed)
	ps.Degenerate = bootstrapMedian(mapTraces(trs, degShare(len(trs[0].Score)-1)), seed)
	ps.Degenerate10 = bootstrapMedian(mapTraces(trs, degShare(10)), seed)
	ps.Rollouts = bootstrapMedian(mapTraces(trs, func(t Trace) float64 { return float64(t.Rollouts[len(t.Rollouts)-1]) }), seed)
	if random == nil {
		return ps
	}
	to := toTarget(trs, random)
	ps.ToTarget = bootstrapMedian(to, seed)
	ps.Reached = shareFinite(to)
	if envTo != nil {
		ps.RatioToEnvsched = bootstrapMedian(ratios(to, envTo), seed)
	}
	if len(trs[0].Score) > 40 {
		ps.BeatsRandomBest = Share(beatsShare(trs, random, 40, envScores))
		ps.TaskBeatsRandomBest = Share(beatsShare(trs, random, 40, taskScores))
	}
	return ps
}

func nanInterval() Interval { return Interval{math.NaN(), math.NaN(), math.NaN()} }

func mapTraces(trs []Trace, f func(Trace) float64) []float64 {
	out := make([]float64, len(trs))
	for i, t := range trs {
		out[i] = f(t)
	}
	return out
}

// best is the highest held-out score after any step.
func best(t Trace) float64 { return bestOf(t.Score) }

// taskBest is the highest per-task held-out score after any step.
func taskBest(t Trace) float64 { return bestOf(t.TaskScore) }

func bestOf(scores []float64) float64 {
	b := math.Inf(-1)
	for _, s := range scores[1:] {
		b = math.Max(b, s)
	}
	return b
}

// envScores and taskScores pick a trace's held-out scores of one weighting.
func envScores(t Trace) []float64  { return t.Score }
func taskScores(t Trace) []float64 { return t.TaskScore }

// degShare is the share of degenerate groups over the first n steps.
func degShare(n int) func(Trace) float64 {
	return func(t Trace) float64 {
		n := min(n, len(t.Groups)-1)
		if t.Groups[n] == 0 {
			return 0
		}
		return float64(t.DegGroups[n]) / float64(t.Groups[n])
	}
}

// toTarget is, per seed, the rollouts a trace spent until its score first reached random's
// final score on the same seed; +Inf when it never did.
func toTarget(trs, random []Trace) []float64 {
	out := make([]float64, len(trs))
	for i, t := range trs {
		target := random[i].Score[len(random[i].Score)-1]
		out[i] = math.Inf(1)
		for s := 1; s < len(t.Score); s++ {
			if t.Score[s] >= target {
				out[i] = float64(t.Rollouts[s])
				break
			}
		}
	}
	return out
}

func shareFinite(xs []float64) float64 {
	n := 0
	for _, x := range xs {
		if !math.IsInf(x, 0) {
			n++
		}
	}
	return float64(n) / float64(len(xs))
}

func ratios(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = a[i] / b[i]
		if math.IsNaN(out[i]) {
			out[i] = 1
		}
	}
	return out
}

// beatsShare is the share of seeds whose score (of the weighting scores picks) after step s
// beats random's best score of the same weighting on the same seed.
func beatsShare(trs, random []Trace, s int, scores func(Trace) []float64) float64 {
	n := 0
	for i, t := range trs {
		if scores(t)[s] > bestOf(scores(random[i])) {
			n++
		}
	}
	return float64(n) / float64(len(trs))
}

// bootstrapMedian is the median of xs with a 95% percentile bootstrap interval (2,000
// resamples, seeded so that tables are reproducible). +Inf values sort last, so a median can
// be +Inf when most seeds never reached a target.
func bootstrapMedian(xs []float64, seed uint64) Interval {
	if len(xs) == 0 {
		return nanInterval()
	}
	rng := rand.New(rand.NewPCG(seed, 0xb007))
	const n = 2000
	meds := make([]float64, n)
	buf := make([]float64, len(xs))
	for i := range meds {
		for j := range buf {
			buf[j] = xs[rng.IntN(len(xs))]
		}
		meds[i] = median(buf)
	}
	sort.Float64s(meds)
	return Interval{
		Median: median(append([]float64(nil), xs...)),
		Lo:     stat.Quantile(0.025, stat.Empirical, meds, nil),
		Hi:     stat.Quantile(0.975, stat.Empirical, meds, nil),
	}
}

// median sorts xs in place and returns its median (the mean of the middle two when even;
// +Inf when one of them is).
func median(xs []float64) float64 {
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	a, b := xs[n/2-1], xs[n/2]
	if math.IsInf(a, 1) || math.IsInf(b, 1) {
		return math.Inf(1)
	}
	return (a + b) / 2
}

// MarshalJSON writes non-finite numbers (a target never reached) as null.
func (iv Interval) MarshalJSON() ([]byte, error) {
	f := func(x float64) string {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "null"
		}
		return strconv.FormatFloat(x, 'g', 6, 64)
	}
	return []byte(`{"median":` + f(iv.Median) + `,"lo":` + f(iv.Lo) + `,"hi":` + f(iv.Hi) + `}`), nil
}

// Share is a fraction that may not exist (NaN), written to JSON as null then.
type Share float64

// MarshalJSON writes NaN as null.
func (s Share) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(s)) {
		return []byte("null"), nil
	}
	return []byte(strconv.FormatFloat(float64(s), 'g', 6, 64)), nil
}

// pairedWins compares envsched with another policy seed by seed: the share of seeds on which
// envsched's held-out score after steps 10 and 40 is higher, its degenerate share over steps
// 1-10 and over the run is lower, and (with random) it needs fewer rollouts to random's final
// score.
func pairedWins(es, other, random []Trace) map[string]Share {
	better := func(f func(Trace) float64, lower bool) Share {
		n := 0
		for i := range es {
			a, b := f(es[i]), f(other[i])
			if a > b && !lower || a < b && lower {
				n++
			}
		}
		return Share(float64(n) / float64(len(es)))
	}
	at := func(s int) func(Trace) float64 {
		return func(t Trace) float64 { return t.Score[min(s, len(t.Score)-1)] }
	}
	wins := map[string]Share{
		"score_10": better(at(10), false), "score_40": better(at(40), false),
		"degenerate_10": better(degShare(10), true), "degenerate": better(degShare(len(es[0].Score)-1), true),
	}
	if random != nil {
		esTo, otherTo := toTarget(es, random), toTarget(other, random)
		n := 0
		for i := range esTo {
			if esTo[i] < otherTo[i] {
				n++
			}
		}
		wins["to_target"] = Share(float64(n) / float64(len(esTo)))
	}
	return wins
}
