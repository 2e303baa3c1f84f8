package propagate

import (
	"maps"
	"math"
)

// Corrections is what a State's online corrections hold now, for a user to see (status.json,
// envsched stats, the report, the metrics): each number is the one the call that returned the
// State used: its predictions, the corrections of its picks and the factors of its selection
// (the scheduler's selectParams reads them from the State the prediction returned). It is a
// function of the State alone, worked out with DefaultParams' fitting settings (the prior
// weight of the environments' dispersion, the mean and count parts of the grid, the start
// scale: settings no command changes), so every reader of one stored state shows the same.
// Numbers are rounded to 4 decimals.
type Corrections struct {
	// Dispersion is the dispersion correction of each channel (the names of the calibration
	// ledger): never_tried that of an environment with no groups of its own (all
	// environments' fit; the start scale while nothing is measured), rechosen that of tasks
	// rolled out before, random_slot that of a random slot of a task never tried.
	Dispersion map[string]Correction `json:"dispersion"`
	// RechosenFactor multiplies the re-chosen correction's count for selection's re-chosen
	// picks (Dispersion.RechosenFactor; 1 while unmeasured).
	RechosenFactor float64 `json:"rechosen_factor"`
	// NeverTriedFactor multiplies the count of selection's picks of tasks never tried, in
	// environments whose rewards are 0 or 1 (Dispersion.NewFactor; 1 while unmeasured).
	NeverTriedFactor float64 `json:"never_tried_factor"`
	// RechosenLowFactor takes rechosen_factor's place for the re-chosen picks predicted to
	// teach little (Dispersion.LowFactor; rechosen_factor while unmeasured).
	RechosenLowFactor float64 `json:"rechosen_low_factor"`
	// NeverTriedOffset is the logit offset added to the mean of selection's picks of tasks
	// never tried, in environments whose rewards are 0 or 1, before never_tried_factor
	// (Dispersion.NewOffset; 0 while unmeasured).
	NeverTriedOffset float64 `json:"never_tried_offset"`
	// RandomFactor multiplies the count of a random slot's answer, in environments whose
	// rewards are 0 or 1 (Dispersion.RandomFactor; 1 while unmeasured), and RandomGroups is
	// the number of random slots' groups it is matched on (Dispersion.RandomWindow).
	RandomFactor float64 `json:"random_factor"`
	RandomGroups int     `json:"random_factor_groups"`
	// RechosenOffset is the one re-chosen logit offset (State.Rechosen).
	RechosenOffset float64 `json:"rechosen_offset"`
	// RechosenTrend is the re-chosen offset's fit as a function of the task; nil while none.
	RechosenTrend *TrendShown `json:"rechosen_trend"`
	// StuckMap is the calibration map of tasks seen only all-equal (Params.DispersionStuck):
	// its coefficients (intercept, the model's logit, log2 of 1 + the evidence's age, log2
	// groups) and the decayed groups it was fitted on (Weight 1); absent while none.
	StuckMap *TrendShown `json:"stuck_map,omitempty"`
	// ExtremeMap is the calibration map of tasks tried in two or more groups whose pooled
	// reward is at most 0.15 or at least 0.85 (Params.DispersionExtreme): its coefficients
	// (as the stuck map's) and the decayed groups it was fitted on (Weight 1); absent while
	// none.
	ExtremeMap *TrendShown `json:"extreme_map,omitempty"`
	// GradedMaps are the graded calibration's maps (Params.GradedCal), by channel
	// (never_tried, rechosen, random_slot): their coefficients (intercept, the answer's logit
	// of an all-equal group; the last two unused, 0) and the decayed groups each was fitted
	// on (Weight 1); absent while no graded pick's group came back (a database of 0/1
	// rewards never has one).
	GradedMaps map[string]*TrendShown `json:"graded_maps,omitempty"`
	// ExplorationReturn, RandomReturn and CoverageReturn are the factors of
	// State.ExplorationReturn (the coverage weight's), RandomReturn (the random share's) and
	// CoverReturn (the coverage of re-tries'), with the groups behind them.
	ExplorationReturn Return `json:"exploration_return"`
	RandomReturn      Return `json:"random_return"`
	CoverageReturn    Return `json:"coverage_return"`
	// Envs holds, for every environment with groups measured or a drift offset, its
	// dispersion correction for tasks never tried and its drift offset.
	Envs map[string]EnvCorrection `json:"envs"`
	// State says where the numbers come from (set by the reader of the stored state,
	// schedule.Corrections): "stored", the state stored with the last answer; "none", no
	// answer has stored one yet; "unreadable", the stored one does not decode (the next answer
	// starts without it, as these numbers do). Empty from State.Corrections.
	State string `json:"state,omitempty"`
}

// Correction is one dispersion correction: the posterior's count multiplied by Scale, the
// mean's departure from its environment's centre by Slope, the count made to depend on the
// mean by Eta and drawn together by Theta (see Dispersion), fitted on Groups (decayed) groups.
type Correction struct {
	Scale  float64 `json:"scale"`
	Slope  float64 `json:"slope"`
	Eta    float64 `json:"eta"`
	Theta  float64 `json:"theta"`
	Groups float64 `json:"groups"`
}

// EnvCorrection is one environment's correction for its tasks never tried (its own groups
// shrunk towards all environments') and its drift offset, in logits.
type EnvCorrection struct {
	Correction
	DriftOffset float64 `json:"drift_offset"`
}

// Return is a measured factor of selection and the (decayed) groups it compares: Groups of
// the kind it weighs (untried tasks, random slots, re-tries for coverage), ReferenceGroups
// of the kind it is compared with (tasks tried before, untried tasks the predictions chose,
// re-tries for predicted spread). Factor is 1 until both have enough groups.
type Return struct {
	Factor          float64 `json:"factor"`
	Groups          float64 `json:"groups"`
	ReferenceGroups float64 `json:"reference_groups"`
}

// TrendShown is the re-chosen trend: its coefficients (intercept, own-evidence gap, log2
// rollouts over G, log2 of 1 + the evidence's age), the decayed groups it was fitted on, and
// its Weight against the one offset, N/(N + 8).
type TrendShown struct {
	Coef   [trendDim]float64 `json:"coef"`
	Groups float64           `json:"groups"`
	Weight float64           `json:"weight"`
}

// Corrections returns what s's corrections hold now (see Corrections). s is read as a call
// starts from it (drift.start): a likelihood of another grid's length (a state stored by an
// earlier version: 13 or 52 corrections, or its JSON's "ll" that no longer decodes), a
// non-finite number or a factor out of bounds is left out, offsets are clamped to their
// bounds, so that what is shown is what the next call uses, and never an index past a grid.
func (s State) Corrections() Corrections {
	p := DefaultParams()
	s.Dispersion = s.Dispersion.clone()
	d := s.Dispersion
	s.Rechosen = min(max(finiteOr0(s.Rechosen), -p.RechosenMax), p.RechosenMax)
	fit := func(ll, prior *Likelihood, w float64) correction {
		return correctionOf(ll, prior, w, p.DispersionByMean, p.DispersionByCount)
	}
	envFit := func(env string) correction {
		if !d.Env[env].measured() && !d.Global.measured() {
			return startCorrection(p.DispersionStart)
		}
		return fit(d.Env[env], d.Global, p.DispersionPrior)
	}
	untried := envFit("")
	random := untried // unmeasured: a random slot keeps its channel's correction
	if d.Random.measured() {
		random = fit(d.Random, d.Global, p.DispersionPrior)
	}
	c := Corrections{
		Dispersion: map[string]Correction{
			"never_tried": shown(untried, groupsOf(d.Global)),
			"rechosen":    shown(fit(d.Rechose, nil, 0), groupsOf(d.Rechose)),
			"random_slot": shown(random, groupsOf(d.Random)),
		},
		RechosenFactor: r4(d.rechosenFactor()), NeverTriedFactor: r4(d.newFactor()),
		RechosenLowFactor: r4(d.lowFactor()), NeverTriedOffset: r4(d.NewOffset),
		RandomFactor: r4(d.randomFactor()), RandomGroups: len(d.RandomWindow),
		RechosenOffset: r4(s.Rechosen),
		ExplorationReturn: Return{Factor: r4(s.ExplorationReturn()), Groups: signalN(d.NewSignal),
			ReferenceGroups: signalN(d.ReSignal)},
		RandomReturn: Return{Factor: r4(s.RandomReturn()), Groups: signalN(d.RandSignal),
			ReferenceGroups: r4(max(signalN(d.NewSignal)-signalN(d.RandSignal), 0))},
		CoverageReturn: Return{Factor: r4(s.CoverReturn()), Groups: signalN(d.CoverSignal),
			ReferenceGroups: signalN(d.ExploitSignal)},
		Envs: map[string]EnvCorrection{},
	}
	if tr := d.Trend; tr != nil && tr.valid() && tr.N > 0 {
		ts := &TrendShown{Groups: r4(tr.N), Weight: r4(tr.N / (tr.N + trendPrior))}
		for i, b := range tr.Beta {
			ts.Coef[i] = r4(b)
		}
		c.RechosenTrend = ts
	}
	if tr := d.Stuck; tr != nil && tr.valid() && tr.N > 0 {
		ts := &TrendShown{Groups: r4(tr.N), Weight: 1}
		for i, b := range tr.Beta {
			ts.Coef[i] = r4(b)
		}
		c.StuckMap = ts
	}
	if tr := d.Extreme; tr != nil && tr.valid() && tr.N > 0 {
		ts := &TrendShown{Groups: r4(tr.N), Weight: 1}
		for i, b := range tr.Beta {
			ts.Coef[i] = r4(b)
		}
		c.ExtremeMap = ts
	}
	if gc := d.Graded; gc != nil {
		for k, name := range []string{"never_tried", "rechosen", "random_slot"} {
			tr := *gc.maps()[k]
			if tr == nil || !tr.valid() || tr.N <= 0 {
				continue
			}
			if c.GradedMaps == nil {
				c.GradedMaps = map[string]*TrendShown{}
			}
			ts := &TrendShown{Groups: r4(tr.N), Weight: 1}
			for i, b := range tr.Beta {
				ts.Coef[i] = r4(b)
			}
			c.GradedMaps[name] = ts
		}
	}
	envs := maps.Clone(s.Offsets)
	if envs == nil {
		envs = map[string]float64{}
	}
	for env := range d.Env {
		if _, ok := envs[env]; !ok {
			envs[env] = 0
		}
	}
	for env := range envs {
		off := min(max(finiteOr0(s.Offsets[env]), -p.DriftMax), p.DriftMax)
		c.Envs[env] = EnvCorrection{Correction: shown(envFit(env), groupsOf(d.Env[env])), DriftOffset: r4(off)}
	}
	return c
}

// Returns are the measured factors of selection by their names: exploration_return,
// random_return, coverage_return.
func (c Corrections) Returns() map[string]Return {
	return map[string]Return{"exploration_return": c.ExplorationReturn, "random_return": c.RandomReturn,
		"coverage_return": c.CoverageReturn}
}

func shown(k correction, groups float64) Correction {
	return Correction{Scale: r4(k.scale), Slope: r4(k.slope), Eta: r4(k.eta), Theta: r4(k.theta), Groups: groups}
}

func groupsOf(l *Likelihood) float64 {
	if !l.measured() {
		return 0
	}
	return r4(l.N)
}

func signalN(s *Signal) float64 {
	if s == nil || !finite(s.N) {
		return 0
	}
	return r4(s.N)
}

func finiteOr0(x float64) float64 {
	if !finite(x) {
		return 0
	}
	return x
}

// r4 rounds x to 4 decimals, as status.json's shares are.
func r4(x float64) float64 { return math.Round(x*1e4) / 1e4 }
