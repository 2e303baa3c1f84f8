package batcher

import (
	"errors"
	"fmt"

	"github.com/envsched/envsched/internal/num"
)

// Exploit names how the exploitation value of a task is measured.
type Exploit int

const (
	// ExploitVariance values a task by its predicted within-group variance times 4, in [0, 1]:
	// the size of the learning signal a group gives when advantages are not normalised by
	// their spread (and a fair coin is worth 1).
	ExploitVariance Exploit = iota
	// ExploitInformative values a task by the chance that its group is not degenerate, 1 −
	// PDegenerate(group size): the right measure when the trainer divides advantages by their
	// spread, so that any non-degenerate group teaches about as much.
	ExploitInformative
	// ExploitSpread values a task by the expected spread of its group's rewards, twice their
	// standard deviation in [0, 1] (see ExpectedSpread): the size of the learning signal a group
	// gives when advantages are not normalised by their spread, since a group's advantages are
	// its rewards minus their mean. It lies between the other two measures: a task near ½ is
	// not worth much more than one at ⅕ or ⅘ (4 × variance over-weighs the centre), and a
	// group that is unlikely to be degenerate but whose rewards barely differ is worth less
	// than one whose rewards split evenly.
	ExploitSpread
	// ExploitLasting values a task by the expected share of informative groups over two steps
	// when it is chosen now and again next step only if its group now was informative (see
	// ExpectedLasting): the chance of an informative group now, plus the chance that it is
	// informative twice in a row, halved. Of two tasks equally likely to be informative now it
	// prefers the one whose posterior is wide (an untried task, which if informative is likely
	// to stay so and be exploited) over one whose posterior sits near 0 or 1 (a task seen
	// all-equal, whose rare unequal group is chance and is not repeated).
	ExploitLasting
	// ExploitMatched values a task by the chance that its group is not degenerate, put on the
	// scale of ExploitVariance: 4p(1 − p) of the 0/1 task whose groups of the same size are
	// all-equal as often (matchedTable). Within one environment it ranks tasks as
	// ExploitInformative does; across environments a task valued so weighs as much as a 0/1
	// task valued by its variance whose groups are as often informative, so that quotas that
	// compare environments' values do not favour the environments measured this way.
	ExploitMatched
)

// String is the name of the exploitation measure, as flags spell it.
func (e Exploit) String() string {
	switch e {
	case ExploitInformative:
		return "informative"
	case ExploitSpread:
		return "spread"
	case ExploitLasting:
		return "lasting"
	case ExploitMatched:
		return "matched"
	}
	return "variance"
}

func (e Exploit) valid() bool {
	return e == ExploitVariance || e == ExploitInformative || e == ExploitSpread || e == ExploitLasting || e == ExploitMatched
}

// ParseExploit returns the measure named s: "variance", "informative", "spread", "lasting" or
// "matched" (the default of Params.ExploitGraded).
func ParseExploit(s string) (Exploit, error) {
	switch s {
	case "variance":
		return ExploitVariance, nil
	case "informative":
		return ExploitInformative, nil
	case "spread":
		return ExploitSpread, nil
	case "lasting":
		return ExploitLasting, nil
	case "matched":
		return ExploitMatched, nil
	}
	return 0, fmt.Errorf("%w: exploit is %q, want variance, informative, spread, lasting or matched", ErrParams, s)
}

// Params are the knobs of selection. Start from DefaultParams.
type Params struct {
	// Exploit is how the exploitation value is measured.
	Exploit Exploit
	// ExploitGraded is how it is measured for a task of an environment with graded rewards
	// (propagate.Prediction.Graded: some reward not 0 or 1). There the mean does not tell the
	// spread: a task that always scores 0.5 has the variance of a fair coin by its mean and
	// never an unequal group, and the Beta-Binomial variance keeps re-choosing such tasks,
	// while the chance of an all-equal group is measured from each task's and each
	// environment's own groups (propagate: graded.go, gradedfit.go). So the default values
	// graded tasks by that chance, on the scale of the variance of 0/1 tasks
	// (ExploitMatched), so that environments of both kinds are weighed alike in the quotas;
	// 0/1 rewards are valued by Exploit.
	// BENCHMARKS.md, "Graded rewards valued by the chance of an informative group".
	ExploitGraded Exploit
	// CoverageWeight is β_c: score = exploit + β_c·coverage − penalty, with exploit and
	// coverage each in [0, 1].
	CoverageWeight float64
	// SimPenalty is η: a candidate's gain is lowered by η times its largest similarity to a
	// task already in the batch (over graph edges), so near-duplicates are not chosen
	// together.
	SimPenalty float64
	// RandomShare is the share of slots given to tasks drawn uniformly from the eligible ones
	// (rounded to the nearest whole slot), which keeps the statistics honest.
	RandomShare float64
	// RandomReturn multiplies RandomShare: what random slots have measurably returned as a way
	// to explore, against the untried tasks the predictions chose (propagate.State.RandomReturn,
	// in [0, 1]; 1 = as much, or nothing measured). A round keeps at least one random slot
	// whenever RandomShare alone gives it one, so that the return is still measured (and the
	// predictions still checked against random choice).
	RandomReturn float64
	// RetryCoverage multiplies the uncertainty and staleness parts of the coverage value of a
	// task rolled out before (not its novelty, not a task never tried), in [0, 1]: 1 leaves
	// them as they are. With CoverReturn the callers set it before each selection to what
	// coverage-driven re-tries have measurably returned (propagate.State.CoverReturn).
	RetryCoverage float64
	// CoverReturn makes the callers (the scheduler, the simulator) multiply RetryCoverage by
	// propagate.State.CoverReturn before each selection; Select itself does not read it
	// (true, the default; false: RetryCoverage as given; BENCHMARKS.md "explore").
	CoverReturn bool
	// QuotaSmoothing is the weight of the uniform share in an environment's quota: the share is
	// (1−s)·(its value / total value) + s/(active environments).
	QuotaSmoothing float64
	// QuotaSize is α, how much an environment's size counts in its quota, in [0, 1]: its value
	// is its mean score × min(eligible, batch size)^(1−α) × eligible^α, and the share it is
	// smoothed towards is eligible^α over the sum of all (α = 0: every environment the same
	// and value capped at one batch; α = 1, the default: proportional to its eligible tasks,
	// so that quotas follow the catalogue's shape).
	QuotaSize float64
	// MinShare is the least quota of an active environment as a fraction of the uniform share
	// (rounded down in a batch, but see MinCredit; never more than its eligible tasks): no
	// environment starves.
	MinShare float64
	// MinCredit honours MinShare over batches when it is not a whole number of slots: each
	// active environment gets the whole part, and the fractional parts, summed and rounded up,
	// go a slot each to the environments behind their minimum over the batches so far whose
	// tasks were chosen the fewest times (the statistics' Chosen counts), so that one entitled
	// to 0.78 slots a batch is not left out of every batch (false, the default, is the older rule: rounded down in each batch alone;
	// BENCHMARKS.md, "The minimum share over batches").
	MinCredit bool
	// RandomOwed gives the environments owed a slot a slot each of a round, out of its random
	// slots (all but one of them when it has two or more): those the quotas leave without a
	// slot in the round (their minimum rounded to nothing and no share big enough for one)
	// and whose tasks were chosen fewer times than MinShare of the uniform share of all picks
	// so far (the statistics' Chosen counts and this batch), fewest first, ties by the seeded
	// hash. The task is the environment's best by gain; the slot is paid by the environment
	// with the most slots over its minimum, so a round has as many slots chosen by gain as
	// without it and one random slot fewer per owed one. With none owed the batch is the same
	// (false, the default: it gave every environment rollouts but raised the real-catalog
	// world's degenerate share; BENCHMARKS.md, "smallenv").
	RandomOwed bool
	// MaxShare is the largest quota of one environment as a fraction of the batch (rounded
	// up); it is exceeded only when the other environments have no tasks left.
	MaxShare float64
	// StaleRounds is τ of the staleness value 1 − exp(−(rounds since last chosen)/τ).
	StaleRounds float64
	// UncertainCount is n₀ of the uncertainty value n₀/(n₀ + own and borrowed evidence).
	UncertainCount float64
	// Transfer is d, how much a task's exploitation value falls as the tasks around it are
	// trained: it is multiplied by 1 − d + d·G/(G + L), where L is the mean decayed number of
	// rollouts of its graph neighbours (weighted by similarity) and G the group size. A task
	// whose neighbours are untried teaches what nothing else in the recent batches taught;
	// one in a well-trained neighbourhood teaches skills already trained (0: off; 0.3 by
	// default, chosen on the simulator's tuning seeds: BENCHMARKS.md, "The headline at step 40").
	Transfer float64
	// Fresh is f, how much a tried task's exploitation value falls as its evidence ages: it is
	// multiplied by 1 − f·(1 − exp(−(r − 1)/τ)), where r is the steps since its last rollout
	// (r = 1 when its last group was in the step before) and τ is StaleRounds. What a group
	// showed about a task's spread is perishable: the learner moves on, and a task informative
	// a few steps ago is often always or never solved now (0: off, the default; experimental,
	// BENCHMARKS.md "Fresh evidence first").
	Fresh float64
	// Overlap is λ: a candidate's gain is also lowered by λ times the share of its catalogue
	// words (graph.Features; weighted by inverse document frequency, words of one task alone
	// left out) that the tasks already taken in the round hold, each word's share halving
	// what is left with every further task that holds it: 1 − ½^c for a word held c times.
	// The similarity penalty reaches a candidate's graph neighbours only, and none of those is
	// ever chosen beside a taken task; words reach every task that shares a skill's vocabulary,
	// so a round spreads over more skills (0: off, the default; BENCHMARKS.md "Words already
	// in the batch").
	Overlap float64
}

// DefaultParams returns the parameters envsched uses unless told otherwise.
func DefaultParams() Params {
	return Params{
		Exploit:        ExploitVariance,
		ExploitGraded:  ExploitMatched,
		CoverageWeight: 0.3,
		SimPenalty:     0.5,
		RandomShare:    0.05,
		RandomReturn:   1,
		RetryCoverage:  1,
		CoverReturn:    true,
		QuotaSmoothing: 0.3,
		QuotaSize:      1,
		MinShare:       0.5,
		RandomOwed:     false,
		MaxShare:       0.5,
		StaleRounds:    10,
		UncertainCount: 4,
		Transfer:       0.3,
	}
}

// MaxWeight bounds CoverageWeight and SimPenalty: a million times the exploitation value
// already decides every choice alone, and a weight near the largest float64 made scores
// overflow to infinity.
const MaxWeight = 1e6

// ErrParams is wrapped by every error of Params.Validate.
var ErrParams = errors.New("invalid selection parameter")

// Validate reports the first parameter out of its range, saying what range it needs.
func (p Params) Validate() error {
	return num.FirstBad(ErrParams, []num.Check{
		{p.Exploit.valid(), "exploit", "variance, informative, spread, lasting or matched", p.Exploit},
		{p.ExploitGraded.valid(), "exploit for graded rewards", "variance, informative, spread, lasting or matched", p.ExploitGraded},
		{p.CoverageWeight >= 0 && p.CoverageWeight <= MaxWeight, "coverage weight", "a number from 0 to 1e6", p.CoverageWeight},
		{p.SimPenalty >= 0 && p.SimPenalty <= MaxWeight, "similarity penalty", "a number from 0 to 1e6", p.SimPenalty},
		{p.RandomShare >= 0 && p.RandomShare <= 1, "random share", "in [0, 1]", p.RandomShare},
		{p.RandomReturn >= 0 && finite(p.RandomReturn), "random return", "a finite number >= 0", p.RandomReturn},
		{p.RetryCoverage >= 0 && p.RetryCoverage <= 1, "retry coverage", "in [0, 1]", p.RetryCoverage},
		{p.QuotaSmoothing >= 0 && p.QuotaSmoothing <= 1, "quota smoothing", "in [0, 1]", p.QuotaSmoothing},
		{p.QuotaSize >= 0 && p.QuotaSize <= 1, "quota size", "in [0, 1]", p.QuotaSize},
		{p.MinShare >= 0 && p.MinShare <= 1, "min share", "in [0, 1]", p.MinShare},
		{p.MaxShare > 0 && p.MaxShare <= 1, "max share", "in (0, 1]", p.MaxShare},
		{p.StaleRounds > 0 && finite(p.StaleRounds), "stale rounds", "a finite number > 0", p.StaleRounds},
		{p.UncertainCount > 0 && finite(p.UncertainCount), "uncertain count", "a finite number > 0", p.UncertainCount},
		{p.Transfer >= 0 && p.Transfer <= 1, "transfer", "in [0, 1]", p.Transfer},
		{p.Fresh >= 0 && p.Fresh <= 1, "fresh", "in [0, 1]", p.Fresh},
		{p.Overlap >= 0 && p.Overlap <= MaxWeight, "overlap", "a number from 0 to 1e6", p.Overlap},
	})
}

func finite(x float64) bool { return num.Finite(x) }
