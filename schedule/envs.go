package schedule

import (
	"fmt"

	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/storage"
)

// EnvPrediction summarises the predictions for an environment's tasks at the next step.
type EnvPrediction struct {
	Tasks      int     // tasks of the environment
	Variance   float64 // mean predicted within-group variance
	Degenerate float64 // mean chance that a group of the given size is degenerate
}

// PredictEnvs predicts every task for the step after the last answered one, as a request
// would (with the drift state stored with the last answer), and averages per environment the
// predicted variance and the chance of a degenerate group of groupSize (the group size the
// prediction takes, as a request of that size would). It only reads db.
// Only opts.Predict and opts.BuildGraph are used.
func PredictEnvs(db *storage.DB, opts Options, groupSize int) (map[string]EnvPrediction, error) {
	opts, err := opts.withDefaults(db.Config().Decay)
	if err != nil {
		return nil, fmt.Errorf("prediction options: %w", err)
	}
	l := loader{db: db, build: opts.BuildGraph}
	st, err := l.load()
	if err != nil {
		return nil, err
	}
	state, err := db.PredictorState()
	if err != nil {
		return nil, err
	}
	pp := *opts.Predict
	pp.GroupSize = groupSize // as a request of groupSize would (see Scheduler.choose)
	pr, err := propagate.NewPredictor(pp)
	if err != nil {
		return nil, err
	}
	// a state that does not decode is passed over, as the scheduler passes over it
	ps, _ := DecodeState(state)
	preds, _, err := pr.Predict(st.g, st.tasks, NextStep(st.lastStep, nil), ps)
	if err != nil {
		return nil, err
	}
	out := make(map[string]EnvPrediction, len(st.g.Envs))
	for i, nd := range st.g.Nodes {
		env := st.g.Envs[nd.Env]
		e := out[env]
		e.Tasks++
		e.Variance += preds[i].Var
		e.Degenerate += preds[i].PDegenerate(groupSize)
		out[env] = e
	}
	for name, e := range out {
		e.Variance, e.Degenerate = num(e.Variance/float64(e.Tasks)), num(e.Degenerate/float64(e.Tasks))
		out[name] = e
	}
	return out, nil
}

// Corrections is what the corrections of the predictor state stored with the last answer
// (storage's PredictorState) hold (propagate.State.Corrections): those the last answer
// predicted and selected with, and the next starts from. A state that does not decode shows
// as none stored, as the scheduler passes over it. status.json, envsched stats, the report
// and the metrics show it.
func Corrections(state []byte) propagate.Corrections {
	st, _ := DecodeState(state)
	return st.Corrections()
}
