package propagate

import (
	"errors"
	"math"

	"github.com/envsched/envsched/internal/num"
	"github.com/envsched/envsched/stats"
)

// Params are the knobs of the prediction. The zero value is not useful: start from
// DefaultParams and change what you need.
type Params struct {
	// Decay is λ: evidence shrinks by this factor per round since it was gathered, so that
	// what an older policy did counts less. In (0, 1]; 1 means no decay.
	Decay float64
	// Kappa is κ, the strength of the prior Beta(κ·m, κ·(1−m)) in pseudo rollouts, m the
	// feature prior's fit or the environment's mean. Small (about 2): the prior serves tasks
	// with no evidence and yields quickly.
	Kappa float64
	// Gamma is γ, the share of a neighbour's own evidence that a node borrows per hop, before
	// the edge weight (normalised by the node's total edge weight) is applied. 0 turns
	// borrowing off. The default, 0.2, was chosen on the simulator's tuning seeds once the
	// feature prior carried what shared words tell (0.5 before).
	Gamma float64
	// Hops is how far evidence travels: 0 (no borrowing), 1 or 2. A node never gets back its
	// own evidence through a two-hop path. The default is 1: on the simulator a second hop
	// did not help (held-out score at step 40, 10 seeds: 0.473 with two hops, 0.476 with one)
	// while it doubles the passes over the edges; its calibration gain is small (mean squared
	// error of the degenerate chance 0.0234 against 0.0241).
	Hops int
	// MinTotalWeight is the least total edge weight a node's borrowing is normalised by, so
	// that a node with a single weak edge borrows in proportion to that edge's weight instead
	// of as much as a well connected node.
	MinTotalWeight float64
	// BorrowCap caps the borrowed evidence of a node, in pseudo rollouts: neighbours are
	// alike, not the same task, so their evidence must not outweigh a few rollouts of the
	// node's own.
	BorrowCap float64
	// VarPrior is the weight, in groups, of the Beta-based variance against the observed
	// within-group variance of a task with continuous rewards.
	VarPrior float64
	// GradedFit fits, per environment with graded rewards, how far the all-equal chance and
	// the within-group variance of a task with groups of its own follow its groups rather
	// than the model: the weight of the model, in groups (VarPrior times 1/8 to 16), and
	// whether its all-equal chance is shifted by the environment's measured gap, by the
	// Beta-Binomial marginal likelihood of the tasks' all-equal groups (gradedfit.go).
	// false weighs the model VarPrior groups, unshifted. Environments whose rewards are all
	// 0 or 1 are the same either way.
	GradedFit bool
	// DriftRate is the smoothing ρ of the per-environment logit offset: each call moves the
	// offset by ρ towards the latest measured gap between realised and predicted means of
	// the tasks that got new rollouts. 0 turns drift correction off. A call measures drift
	// against the baselines of the State it is given.
	DriftRate float64
	// DriftMax bounds the absolute logit offset of an environment.
	DriftMax float64
	// DriftMinRollouts is the least number of new rollouts of an environment between two
	// calls for a drift measurement to count.
	DriftMinRollouts int
	// FeatureRidge is λ of the feature prior: when the graph carries catalogue features
	// (graph.Features), the prior mean of every node is a ridge regression (fitted again as
	// PriorRefit says) of the logits of the rolled-out nodes on their words, tools, tags and
	// environment, instead of the environment's mean. 0 turns it off.
	FeatureRidge float64
	// PriorRefit is how much the evidence must grow before the feature prior is fitted
	// again: a call keeps the fit of the State it is given (State.Warm) while the rollouts
	// counted over every node are those that fit was made on, or more but fewer than
	// 1 + PriorRefit times as many (and the environments are the same), and fits afresh,
	// starting from it, otherwise. Between fits no node's prior moves, and a call skips the
	// fit's passes. 0 (the default) fits whenever a rollout came since the last fit: a
	// trainer that writes rollouts between its requests gets a fit at every request, as
	// before; requests with nothing new in between keep it. On the simulator's tuning seeds
	// 0.1 and 0.05 left the step-40 scores level but predicted the degenerate share of tasks
	// never tried a little worse in nearly every world (BENCHMARKS.md, "The feature prior
	// kept between refits").
	PriorRefit float64
	// RechosenRate is the smoothing of the re-chosen offset: one logit offset, for every
	// node that was rolled out before, moved at each call by this share towards the latest
	// gap between the realised and the predicted means of such nodes' new rollouts (a task
	// trained on gets easier faster than its decayed evidence says). With it on, the
	// per-environment drift offsets measure and move only nodes never rolled out. 0 turns
	// it off.
	RechosenRate float64
	// RechosenMax bounds the absolute re-chosen offset.
	RechosenMax float64
	// RechosenTrend makes the re-chosen offset a function of the task (see Trend) and is the
	// share of what its fit measured that each call keeps: the offset of a task rolled out
	// before is a + b·(logit of its own decayed mean − logit of its prediction) + c·log2(its
	// rollouts / GroupSize), the coefficients fitted to the re-chosen groups that came back
	// by their binomial likelihood. Measured on the simulator: tasks trained on often got
	// easier than one offset says and tasks trained once harder, and the posterior pulled
	// a task's own evidence towards its prior further than the truth was. 0 keeps one offset
	// for all (RechosenRate). It needs RechosenRate > 0 and DispersionMemory > 0: it is
	// stored with the dispersion state (Dispersion.Trend).
	RechosenTrend float64
	// DispersionMemory turns on the dispersion correction and is the share of what it
	// measured that each call keeps (the rest is forgotten): every group that comes back
	// for a task in a State's baseline adds its Beta-Binomial likelihood, under the
	// prediction made when the task was chosen, to its channel, for each scale of the
	// posterior's count on a grid from 1/16 to 4; each call scales the count of every
	// posterior by the most likely scale of its channel: per environment for tasks never
	// rolled out (shrunk towards all environments' by DispersionPrior groups), one for the
	// tasks rolled out before. So how spread out the tasks of an environment are, and how
	// far a trained task moves, are measured, not assumed. 0 turns it off.
	DispersionMemory float64
	// DispersionPrior is the weight, in groups, of the likelihood of all environments in an
	// environment's choice of scale (empirical Bayes: an environment with few groups takes
	// the global scale).
	DispersionPrior float64
	// DispersionStart is the scale of the count of tasks never tried while nothing is
	// measured yet (the first request of a database, when the correction is on), in the
	// predictions selection reads: below 1 the first batch is predicted more spread out than
	// the prior's strength κ says. Chosen on the simulator's tuning seeds over every world
	// together, as the value whose first steps are honest across them; the measured correction
	// replaces it from the first groups on.
	DispersionStart float64
	// StartDegenerate, when above 0, is what the answer says of a pick of a task never tried
	// while nothing is measured (random slots too): its prior's part κ of the count is set so
	// that, at mean ½, its group of GroupSize comes back all-equal with this chance, whatever
	// the group size and κ; evidence it borrowed from neighbours is kept whole. A scale of the
	// count cannot: the same Beta says 0.51 for groups of 4 and 0.23 for groups of 16, while
	// the first groups of agent benchmarks come back all-equal about as often whatever G (a
	// task always or never solved is all-equal in any group). Chosen once, on the tuning seeds
	// of every simulated and acceptance world together, as the chance whose first request is
	// the least wrong across them (BENCHMARKS.md): the first request cannot know whether its
	// world is one of coin flips or of always-or-never tasks. Answer only, like the factors:
	// what selection reads keeps DispersionStart, so every batch holds the tasks it held.
	// Groups of 2 (all-equal with chance ½ or more whatever the count) keep DispersionStart.
	StartDegenerate float64
	// DispersionByMean lets the correction's count depend on the predicted mean: the count
	// of a prediction of mean m is multiplied by (4·m·(1−m))^(−η), η chosen per channel with
	// the scale and the slope by the same likelihood (0, ½, 1 or 1½). One scale per channel
	// cannot be honest both near ½, where selection picks, and far from it, where random
	// slots and tasks known easy or hard sit; false fits η = 0 only.
	DispersionByMean bool
	// DispersionByCount lets the correction draw the counts of a channel together: a count
	// n becomes 2·(n/2)^θ before the scale, θ chosen with the rest (1 or ½). Below 1 the
	// evidence that makes one prediction surer than another was worth less than it says,
	// which selection, preferring the surest informative tasks, sees and random slots do
	// not; false fits θ = 1 only.
	DispersionByCount bool
	// DispersionMatch matches the count of re-chosen picks to what came back: each call finds
	// the factor of the re-chosen correction's count under which the share of degenerate
	// groups predicted for the tasks tried before that selection picked (not random slots)
	// equals the share realised, and moves the stored factor a fifth of the way there (on
	// the log scale); Predictor.Pick answers such a pick with its count multiplied by it.
	// Selection picks the tasks whose prediction looks most informative, and trains on them:
	// a winner's curse that the likelihood over every re-chosen group does not see and the
	// factor does. Selection itself reads the predictions without it. false measures nothing.
	DispersionMatch bool
	// NewMatch does for selection's picks of tasks never tried what DispersionMatch does for
	// re-chosen ones: each call finds the factor of the count under which the share of
	// degenerate groups predicted for the never-tried tasks that selection picked (not random
	// slots; 0/1 environments only) equals the share that came back, each group under its
	// environment's correction then, and moves the stored factor (Dispersion.NewFactor) a
	// fifth of the way there on the log scale; Predictor.Pick answers such a pick with its
	// count multiplied by it. Selection ranks the untried tasks by predictions that the
	// environment's correction made right on average over the environment's groups, and
	// takes those that look the most informative: the same winner's curse. In the acceptance
	// harness's 0/1 worlds such picks came back all-equal 5 to 15 points more often than
	// predicted (BENCHMARKS.md, "Never-tried picks: the winner's curse measured"). Selection
	// reads the predictions without it. It needs DispersionMemory > 0; false measures nothing.
	NewMatch bool
	// NewShift matches the level of selection's picks of tasks never tried as NewMatch
	// matches their spread: each call that measures the never-tried factor also finds the
	// logit offset under which the mean reward predicted for those picks' groups (each as
	// predicted under its environment's correction then, before the offset and the factor)
	// equals the mean that came back, moves the stored offset (Dispersion.NewOffset) a fifth
	// of the way there (within ±newOffsetMax), and matches the factor on the groups with
	// their means so moved; Predictor.Pick answers such a pick with its mean moved by the
	// offset, then its count multiplied by the factor. In worlds where training an
	// environment lifts its untried tasks, the untried picks' predicted mean lags (the
	// acceptance harness's agentic world after step 20: 0.64 predicted, 0.80 true), and a
	// count factor alone, moving a fifth of the way each time 8 groups are back, could not
	// follow: they came back all-equal 5 points more often than answered. The first
	// request's groups, answered at ½ before anything was known (Baseline.Start), never move
	// it, whenever they come back. Answer only: selection reads nothing of it. It needs
	// NewMatch; false measures nothing.
	NewShift bool
	// LowMatch splits DispersionMatch's re-chosen factor in two: selection's re-chosen picks
	// predicted to teach little (4·E[p(1−p)] below ½ under the re-chosen correction: the
	// tasks batcher picks as "best predicted variance left", when nothing informative is
	// left) are matched apart (Dispersion.LowFactor, their groups waiting in the state while
	// fewer than minFactorGroups), the others by RechosenFactor as before. The one factor,
	// fitted on all, is the informative picks' and leaves these predicted less degenerate
	// than they come back (the acceptance harness: 5 to 19 points). Answer only.
	LowMatch bool
	// RandomMatch matches the answers of random slots to what came back: the count of a
	// random slot's answer (under the random slots' correction, Predictor.Pick) is multiplied
	// by the factor under which the share of degenerate groups predicted for the last
	// randomWindow random slots of environments whose rewards are 0 or 1 equals the share
	// that came back, each as its answer gave it then (Dispersion.RandomFactor; unset until
	// minFactorGroups have come back). The random slots' own likelihood is shrunk towards
	// their channel's, fitted on selection's picks, by DispersionPrior groups, so while random
	// slots are few (3 a request in a batch of 64) their answers take selection's picks'
	// correction, which left them 0.03-0.10 too degenerate in the first ten requests of the
	// simulator. Answer only: selection reads nothing of it. It needs DispersionMemory > 0;
	// false measures nothing.
	RandomMatch bool
	// DispersionStuck predicts the tasks tried before whose every group so far was
	// all-equal ("stuck": always or never solved, rewards 0 or 1) by a calibration map of
	// their own (Dispersion.Stuck): the logit of the chance that such a task's next group is
	// all-equal is the model's plus β·(1, the model's logit, log2(1 + rounds since its
	// evidence), log2 of its groups), β fitted online to whether the groups of the stuck tasks
	// that selection picked came back all-equal, by their Bernoulli likelihood with a ridge
	// and what earlier calls measured kept as a Gaussian decayed by DispersionMemory (as the
	// re-chosen trend is). The task's posterior keeps its mean and takes the count under which
	// its chance of an all-equal group of GroupSize is the map's, so its within-group variance,
	// what selection values, follows; the answer gives it as it is (the re-chosen factor of
	// DispersionMatch then measures and corrects the other re-tries only). The re-chosen
	// correction, fitted mostly on tasks that gave unequal groups, lets a stuck task's decayed
	// evidence go back to its prior's spread, while the task seldom moves. It needs
	// DispersionMemory > 0; false measures nothing and predicts as before.
	DispersionStuck bool
	// DispersionExtreme predicts the tasks tried before in two or more groups (rewards 0 or
	// 1) whose pooled reward so far is at most 0.15 or at least 0.85 (their own groups show
	// them mostly failed or mostly solved) by a calibration map of their own
	// (Dispersion.Extreme, extreme.go), the stuck map's kind: the logit of the chance that such
	// a task's next group is all-equal is the model's plus β·(1, the model's logit, log2(1 +
	// rounds since its evidence), log2 of its groups), β fitted online to whether the groups of
	// such tasks that selection picked came back all-equal. The posterior keeps its mean and
	// takes the count under which its chance of an all-equal group of GroupSize is the map's,
	// so selection reads it; the answer gives it as it is (the re-chosen factor of
	// DispersionMatch then measures and corrects the other re-tries only). With
	// DispersionStuck on, stuck tasks stay in the stuck map. It needs DispersionMemory > 0;
	// false measures nothing and predicts as before.
	DispersionExtreme bool
	// GradedCal calibrates the chance of an all-equal group that the answer gives a pick of
	// an environment with graded rewards: per channel (never tried, re-chosen, random slot)
	// the logit of that chance is moved by a map β·(1, its logit), β fitted online by the
	// Bernoulli likelihood of whether the groups of such picks that came back were all-equal,
	// with a ridge towards 0 and what earlier calls measured kept as a Gaussian decayed by
	// DispersionMemory (gradedcal.go; stored with the dispersion state, Dispersion.Graded).
	// Environments whose rewards are all 0 or 1 are measured and answered as before. It
	// needs DispersionMemory > 0; false measures nothing and answers as before.
	GradedCal bool
	// GradedCalSelect makes selection read the calibrated chance too: every prediction of a
	// task of a graded environment carries the map of its channel (re-chosen for a task
	// rolled out before, never tried otherwise), so that the exploitation value of graded
	// tasks (batcher's ExploitGraded, which reads the chance of an all-equal group) follows
	// it. false leaves what selection reads as before: the map changes the answer alone, as
	// Pick's other corrections do.
	GradedCalSelect bool
	// DriftCentre makes the centre of the dispersion correction's slope, for a task never
	// tried, its environment's centre moved by the environment's drift offset: the slope then
	// shrinks a task's departure from its environment's level as the drift offset has
	// measured it, not the offset itself. Off, the centre is the environment's decayed mean
	// before the offset, and a slope s < 1 (fitted to shrink the feature prior's noisy
	// departures) applies only s times the offset: in the acceptance world giants, where
	// training an environment lifts its untried tasks, the offsets sat at DriftMax and the
	// untried picks' predicted mean lagged the truth (0.58-0.72 against 0.63-0.84), which a
	// spread of the count made up only in part (BENCHMARKS.md, "Tasks never tried: a lagging
	// mean and a slope tied to it"). With it the never-tried gap fell there, but random slots
	// were predicted too degenerate and the held-out score did not rise: false (the default)
	// predicts as before.
	DriftCentre bool
	// GroupSize is the group size G for which Prediction.PDeg is filled in (PDegenerate
	// gives any other size) and the G of the re-chosen trend's feature log2(rollouts / G).
	// A scheduler sets it to each request's group size (Predictor.SetGroupSize).
	GroupSize int
	// Lean leaves every prediction's SD and PDeg at 0, for a caller that reads neither (the
	// scheduler: selection and the answer work the chance of a degenerate group out for the
	// request's group size with Prediction.PDegenerate). It changes no other number; false
	// (the default) fills both in.
	Lean bool
	// Loads makes Predict also work out every node's neighbour load (Predictor.Loads), the
	// input of selection's transfer factor, in the pass over the edges it makes anyway. It
	// changes no prediction; false (the default) works out none.
	Loads bool
}

// DefaultParams returns the parameters envsched uses unless told otherwise.
func DefaultParams() Params {
	return Params{
		Decay:             stats.DefaultDecay,
		Kappa:             2,
		Gamma:             0.2,
		Hops:              1,
		MinTotalWeight:    1,
		BorrowCap:         4,
		VarPrior:          2,
		GradedFit:         true,
		DriftRate:         0.2,
		DriftMax:          1,
		DriftMinRollouts:  8,
		FeatureRidge:      1,
		RechosenRate:      0.5,
		RechosenMax:       2,
		RechosenTrend:     0.9,
		DispersionMemory:  0.95,
		DispersionPrior:   16,
		DispersionStart:   0.6,
		StartDegenerate:   0.5,
		DispersionByMean:  true,
		DispersionByCount: true,
		DispersionMatch:   true,
		GradedCal:         true,
		NewMatch:          true,
		NewShift:          true,
		LowMatch:          true,
		RandomMatch:       true,
		GroupSize:         8,
	}
}

// ErrParams is wrapped by every error of Params.Validate.
var ErrParams = errors.New("invalid prediction parameter")

// Validate reports the first parameter out of its range, saying what range it needs.
func (p Params) Validate() error {
	return num.FirstBad(ErrParams, []num.Check{
		{p.Decay > 0 && p.Decay <= 1, "decay", "in (0, 1]", p.Decay},
		{p.Kappa > 0 && finite(p.Kappa), "kappa", "a finite number > 0", p.Kappa},
		{p.Gamma >= 0 && p.Gamma <= 1, "gamma", "in [0, 1]", p.Gamma},
		{p.Hops >= 0 && p.Hops <= 2, "hops", "0, 1 or 2", p.Hops},
		{p.MinTotalWeight > 0 && finite(p.MinTotalWeight), "min total weight", "a finite number > 0", p.MinTotalWeight},
		{p.BorrowCap >= 0 && finite(p.BorrowCap), "borrow cap", "a finite number >= 0", p.BorrowCap},
		{p.VarPrior > 0 && finite(p.VarPrior), "variance prior", "a finite number > 0", p.VarPrior},
		{p.DriftRate >= 0 && p.DriftRate <= 1, "drift rate", "in [0, 1]", p.DriftRate},
		{p.DriftMax >= 0 && finite(p.DriftMax), "drift max", "a finite number >= 0", p.DriftMax},
		{p.DriftMinRollouts >= 0, "drift min rollouts", ">= 0", p.DriftMinRollouts},
		{p.FeatureRidge >= 0 && finite(p.FeatureRidge), "feature ridge", "a finite number >= 0", p.FeatureRidge},
		{p.PriorRefit >= 0 && finite(p.PriorRefit), "prior refit", "a finite number >= 0", p.PriorRefit},
		{p.RechosenRate >= 0 && p.RechosenRate <= 1, "re-chosen rate", "in [0, 1]", p.RechosenRate},
		{p.RechosenMax >= 0 && finite(p.RechosenMax), "re-chosen max", "a finite number >= 0", p.RechosenMax},
		{p.RechosenTrend >= 0 && p.RechosenTrend < 1, "re-chosen trend", "in [0, 1)", p.RechosenTrend},
		{p.DispersionMemory >= 0 && p.DispersionMemory < 1, "dispersion memory", "in [0, 1)", p.DispersionMemory},
		{p.DispersionPrior >= 0 && finite(p.DispersionPrior), "dispersion prior", "a finite number >= 0", p.DispersionPrior},
		{p.DispersionStart > 0 && p.DispersionStart <= 16 && finite(p.DispersionStart), "dispersion start", "in (0, 16]", p.DispersionStart},
		{p.StartDegenerate >= 0 && p.StartDegenerate < 1, "start degenerate", "in [0, 1)", p.StartDegenerate},
		{p.GroupSize >= 1 && p.GroupSize <= 1<<16, "group size", "an integer from 1 to 65536", p.GroupSize},
	})
}

func finite(x float64) bool { return num.Finite(x) }

// startCount is the count c of a Beta(c/2, c/2) whose groups of g come back all-equal with
// chance StartDegenerate (the answer's start, see Params.StartDegenerate), from 2^−20 to 2^20
// by bisection on log c (the chance falls as the count grows, from 1 towards 2^(1−g)); false
// when StartDegenerate is 0, for groups of one, and where no count gives the chance (groups
// of 2 are all-equal with chance ½ or more whatever the count).
func (p Params) startCount(g int) (float64, bool) {
	want := p.StartDegenerate
	if want <= 0 || g < 2 || want <= math.Exp2(float64(1-g)) {
		return 0, false
	}
	at := func(lc float64) float64 { c := math.Exp2(lc); return BetaBinomialDegenerate(c/2, c/2, g) }
	return math.Exp2(bisectFalling(at, want, -20, 20, 60)), true
}
