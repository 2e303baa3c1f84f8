package sim

import (
	"fmt"
	"math"

	"github.com/envsched/envsched/batcher"
	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/stats"
)

// EnvschedParams are the parameters the envsched policy hands to the real graph, propagate
// and batcher packages. The ablations change one thing each on top of them.
type EnvschedParams struct {
	Graph   graph.Options
	Predict propagate.Params
	Select  batcher.Params
	// NoFeatures leaves the catalogue features off the graph, so that the predictor uses
	// environment priors (the daemon always attaches features; a task with no catalogue row
	// gets an empty row, so its prior is its environment's and the intercept's part of the fit).
	NoFeatures bool
	// FixedExploration keeps the coverage weight of selection as given, instead of
	// multiplying it by what exploring has measurably returned (State.ExplorationReturn).
	FixedExploration bool
}

// DefaultEnvschedParams are the packages' own defaults: what `envsched run` uses.
func DefaultEnvschedParams() EnvschedParams {
	return EnvschedParams{Graph: graph.Options{}, Predict: propagate.DefaultParams(), Select: batcher.DefaultParams()}
}

// ablation changes the parameters of one envsched variant.
type ablation func(*EnvschedParams)

// envschedVariant returns the change that the named variant makes, and whether the name is
// envsched or one of its ablations.
func envschedVariant(name string) (ablation, bool) {
	switch name {
	case "envsched":
		return func(*EnvschedParams) {}, true
	case "envsched-nograph": // no edges at all: no borrowing and no similarity penalty
		return func(p *EnvschedParams) { p.Graph.K, p.Graph.KCross = -1, -1 }, true
	case "envsched-notext": // no edges and no features: the catalogue text is not read
		return func(p *EnvschedParams) { p.Graph.K, p.Graph.KCross, p.NoFeatures = -1, -1, true }, true
	case "envsched-nofeatures": // environment priors instead of the feature prior
		return func(p *EnvschedParams) { p.NoFeatures = true }, true
	case "envsched-nocalib": // no dispersion correction: scales, slopes and exploration return off
		return func(p *EnvschedParams) { p.Predict.DispersionMemory = 0 }, true
	case "envsched-norechosen": // no re-chosen offset
		return func(p *EnvschedParams) { p.Predict.RechosenRate = 0 }, true
	case "envsched-nocross":
		return func(p *EnvschedParams) { p.Graph.KCross = -1 }, true
	case "envsched-noquota": // quotas follow value alone: no minimum, no maximum, no smoothing
		return func(p *EnvschedParams) {
			p.Select.MinShare, p.Select.MaxShare, p.Select.QuotaSmoothing = 0, 1, 0
		}, true
	case "envsched-nopenalty":
		return func(p *EnvschedParams) { p.Select.SimPenalty = 0 }, true
	case "envsched-nodecay":
		return func(p *EnvschedParams) { p.Predict.Decay = 1 }, true
	case "envsched-nocovreturn": // the coverage of re-tries not weighed by what such re-tries returned
		return func(p *EnvschedParams) { p.Select.CoverReturn = false }, true
	case "envsched-stuck": // tasks seen only all-equal predicted by a calibration map of their own
		return func(p *EnvschedParams) { p.Predict.DispersionStuck = true }, true
	case "envsched-extreme": // re-tries of 2+ groups predicted by a calibration map reading how extreme their own mean is
		return func(p *EnvschedParams) { p.Predict.DispersionExtreme = true }, true
	case "envsched-driftcentre": // the slope of untried tasks' correction about their environment's level after its drift offset
		return func(p *EnvschedParams) { p.Predict.DriftCentre = true }, true
	case "envsched-truth": // the same parameters; the predictions are replaced by the truth
		return func(*EnvschedParams) {}, true
	}
	return nil, false
}

// envschedPolicy is envsched itself: the graph built by graph.Builder from the catalogue
// text, per-task statistics kept with stats.Task.Add exactly as storage keeps them, a
// propagate.Predictor called every step with the drift state of the step before (so that it
// measures drift) and batcher.Select.
type envschedPolicy struct {
	name   string
	params EnvschedParams
	g      *graph.Graph
	pred   *propagate.Predictor
	state  propagate.State // the drift state the next prediction takes
	tasks  []stats.Task    // indexed like g.Nodes
	node   []int           // world task index → graph node
	task   []int           // graph node → world task index
	seed   uint64
	// truth makes the variant envsched-truth: batcher.Select gets the true success
	// probabilities instead of propagate's predictions. It is a reference that tells apart
	// what envsched loses by predicting from what it loses by choosing.
	truth bool
	calib calibRecorder
}

// Calibration is what the policy's predictions of degenerate groups were against what came.
func (p *envschedPolicy) Calibration() *Calibration { return &p.calib.cal }

// RetryCalibration is Calibration's re-tries by history and evidence age.
func (p *envschedPolicy) RetryCalibration() *RetryCalibration { return &p.calib.retry }

func (p *envschedPolicy) StepCalibration() *StepCalibration { return &p.calib.steps }

func newEnvsched(name string, change ablation, w *World, cfg Config) (Policy, error) {
	p := DefaultEnvschedParams()
	if cfg.Envsched != nil {
		p = *cfg.Envsched
	}
	change(&p)
	p.Predict.GroupSize = cfg.GroupSize
	if p.Graph.Workers == 0 {
		p.Graph.Workers = 1 // the runner already uses every CPU
	}
	pred, err := propagate.NewPredictor(p.Predict)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", name, err)
	}
	if err := p.Select.Validate(); err != nil {
		return nil, fmt.Errorf("policy %s: %w", name, err)
	}
	b := graph.NewBuilder(p.Graph)
	b.Add(w.Catalog())
	es := &envschedPolicy{name: name, params: p, g: b.Snapshot(), pred: pred, seed: w.Seed,
		truth: name == "envsched-truth"}
	if err := es.index(w); err != nil {
		return nil, fmt.Errorf("policy %s: %w", name, err)
	}
	if !p.NoFeatures {
		rows := make([]record.Task, len(es.task))
		for i, t := range es.task {
			rows[i] = w.Tasks[t].Record
		}
		es.g = es.g.WithFeatures(graph.TextFeatures(rows))
	}
	return es, nil
}

// index maps the graph's nodes to the world's tasks by (environment, task) name.
func (p *envschedPolicy) index(w *World) error {
	byKey := make(map[string]int, len(w.Tasks))
	for i, t := range w.Tasks {
		byKey[t.Record.Env+"\x00"+t.Record.Task] = i
	}
	p.tasks = make([]stats.Task, p.g.Len())
	p.task = make([]int, p.g.Len())
	p.node = make([]int, len(w.Tasks))
	for i, nd := range p.g.Nodes {
		t, ok := byKey[p.g.Envs[nd.Env]+"\x00"+nd.Task]
		if !ok {
			return fmt.Errorf("graph node %s/%s is not in the catalogue", p.g.Envs[nd.Env], nd.Task)
		}
		p.task[i], p.node[t] = t, i
	}
	if p.g.Len() != len(w.Tasks) {
		return fmt.Errorf("graph has %d nodes for %d catalogue tasks", p.g.Len(), len(w.Tasks))
	}
	return nil
}

func (p *envschedPolicy) Name() string { return p.name }

// predict predicts every node for step with the drift state the previous call returned, and
// keeps the state after it with the baselines of every node, so that the next call measures
// drift against this one.
func (p *envschedPolicy) predict(step int64) ([]propagate.Prediction, error) {
	preds, next, err := p.pred.Predict(p.g, p.tasks, step, p.state)
	if err != nil {
		return nil, err
	}
	next.Baseline = propagate.Baselines(p.g, p.tasks, preds, nil)
	p.state = next
	return preds, nil
}

func (p *envschedPolicy) Choose(v *View) ([]int, error) {
	step := int64(v.Step)
	preds, err := p.predict(step)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", p.name, err)
	}
	if p.truth {
		p.useTruth(preds, v)
	}
	req := batcher.Request{Size: v.Size, GroupSize: v.Group, Step: step, Seed: mix(p.seed ^ uint64(step)<<20)}
	b, err := batcher.Select(p.g, preds, p.tasks, req, p.selectParams())
	if err != nil {
		return nil, fmt.Errorf("policy %s: step %d: %w", p.name, v.Step, err)
	}
	out := make([]int, 0, len(b.Picks))
	for _, pk := range b.Picks {
		// the baselines are every node's, by index
		p.state.Baseline[pk.Node].Random, p.state.Baseline[pk.Node].Cover = pk.Random, pk.ForCoverage()
		p.state.Baseline[pk.Node].Start = p.state.AtStart() && p.tasks[pk.Node].Rollouts == 0 // as the daemon's
		pr := p.pred.Pick(p.state, preds[pk.Node], p.tasks[pk.Node].Rollouts > 0, pk.Random)
		t := &p.tasks[pk.Node]
		retry := 0
		switch {
		case pk.Random:
		case t.Rollouts > 0:
			retry = 2
			if t.Groups > 0 && t.Degenerate == t.Groups {
				retry = 1
			}
		case preds[pk.Node].Borrowed >= 1:
			retry = 1 + untriedBorrowed
		default:
			retry = 1 + untriedPrior
		}
		age := step - t.Round
		if t.Rollouts == 0 {
			age = 0
		}
		p.calib.pickRetry(p.task[pk.Node], channelOf(pk, t), pr.PDegenerate(v.Group), retry, age)
		p.tasks[pk.Node].Chosen++
		p.tasks[pk.Node].LastChosen = step
		out = append(out, p.task[pk.Node])
	}
	return out, nil
}

// selectParams are the selection parameters of the next batch, moved by what the state the
// last prediction left has measured, as the scheduler moves them.
func (p *envschedPolicy) selectParams() batcher.Params {
	sel := p.params.Select
	if !p.params.FixedExploration {
		sel.CoverageWeight *= p.state.ExplorationReturn()
	}
	sel.RandomReturn *= p.state.RandomReturn()
	if sel.CoverReturn {
		sel.RetryCoverage *= p.state.CoverReturn()
	}
	return sel
}

// channelOf is the calibration channel of a pick of a task with statistics t.
func channelOf(pk batcher.Pick, t *stats.Task) Channel {
	switch {
	case pk.Random:
		return ChannelRandom
	case t.Rollouts == 0:
		return ChannelNew
	}
	return ChannelRechosen
}

// truthCount is the effective count of the Beta posteriors that envsched-truth hands the
// batcher: large enough that the posterior is the true probability.
const truthCount = 1000

// useTruth replaces each prediction's posterior by one centred on the true success
// probability, keeping the evidence counts that the coverage value reads.
func (p *envschedPolicy) useTruth(preds []propagate.Prediction, v *View) {
	for i := range preds {
		q := v.Truth(p.task[i])
		a, b := truthCount*q, truthCount*(1-q)
		preds[i] = propagate.Prediction{Alpha: a, Beta: b, Mean: q, Var: propagate.BetaVariance(a, b),
			SD: math.Sqrt(q * (1 - q) / (truthCount + 1)), Own: preds[i].Own, Borrowed: preds[i].Borrowed}
		preds[i].PDeg = preds[i].PDegenerate(v.Group)
	}
}

// Observe counts every reward of every group with stats.Task.Add, as ingestion does.
func (p *envschedPolicy) Observe(step int, groups []Group) {
	p.calib.observe(step, groups)
	for _, g := range groups {
		st := &p.tasks[p.node[g.Task]]
		var grp stats.Group
		for j := range g.Size {
			r := 0.0
			if j < g.Successes {
				r = 1
			}
			st.Add(r, int64(step), int64(step), true, &grp, p.params.Predict.Decay)
		}
	}
}
