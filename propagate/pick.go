package propagate

// Pick returns p, the prediction of a task that selection picked, as the answer gives it:
// corrected for how the pick was made; st is the State returned by the call that made p,
// tried whether the task had been rolled out then, random whether it was drawn into a random
// slot. Selection reads the predictions before this: the corrections here are what came back
// for picks made the same way, so they belong to the pick, not to the task.
//
//   - A random slot is drawn whatever its prediction, while each channel's correction is
//     fitted mostly on selection's picks, which sit near ½ with the most evidence behind
//     them: it gets the correction that the groups of random slots measured
//     (Dispersion.Random, shrunk towards the likelihood of the task's channel by
//     Params.DispersionPrior groups) in place of its channel's; in an environment whose
//     rewards are 0 or 1 its count is then multiplied by the random-slot factor
//     (Params.RandomMatch), matched on the last random slots' groups as answered, which
//     follows them while they are too few for their likelihood to outweigh the channel's.
//
//   - A task tried before that selection chose is one that looked the most informative of
//     its kind, and was trained on (a winner's curse): its re-chosen correction's count is
//     multiplied by the re-chosen factor (Params.DispersionMatch), which makes the share of
//     degenerate groups predicted for such picks match the share that came back.
//
//   - A task never tried that selection chose, in an environment whose rewards are 0 or 1,
//     is one whose prediction looked the most informative of the untried (the same curse):
//     its count, under its environment's correction already, is multiplied by the
//     never-tried factor (Params.NewMatch).
//
//   - A pick of an environment with graded rewards then takes the graded calibration's map of
//     its channel (Params.GradedCal, gradedcal.go), which moves its chance of an all-equal
//     group alone: Prediction.GradedBase is that chance before the map, what the channel
//     measures the pick against.
//
// Only what the answer says of the task changes (Alpha, Beta, Mean, Var, SD, PDeg); what the
// dispersion and drift measurements read of p (its mean and count before the correction)
// does not, so the baselines of a pick are those of its task. p is returned unchanged while
// nothing is measured for its kind of pick, with the corrections off, for a task with
// continuous rewards (which they never measure) and for a task never tried of an environment
// with graded rewards, but for the graded calibration's map.
func (pr *Predictor) Pick(st State, p Prediction, tried, random bool) Prediction {
	return pr.Picker(st)(p, tried, random)
}

// Picker returns Pick(st, ·) for the picks of one answer: the correction of each kind of
// pick (tried or not, random or not) depends on st alone, so it is found once for each kind,
// not once for each pick (a search over the dispersion grid's corrections).
func (pr *Predictor) Picker(st State) func(p Prediction, tried, random bool) Prediction {
	type memo struct {
		k          correction
		ok, worked bool
	}
	var kinds [2][2]memo
	// the low-value re-chosen factor applies to a re-chosen pick whose prediction under the
	// re-chosen correction teaches little, whether or not the re-chosen factor is measured
	lowF := validFactor(st.Dispersion.LowFactor)
	var reK correction
	if lowF > 0 && pr.p.LowMatch && pr.p.DispersionMatch {
		reK = correctionOf(st.Dispersion.Rechose, nil, 0, pr.p.DispersionByMean, pr.p.DispersionByCount)
	} else {
		lowF = 0
	}
	graded := pr.p.GradedCal && pr.p.DispersionMemory > 0
	randF := 0.0 // the random-slot factor (Params.RandomMatch)
	if pr.p.RandomMatch {
		randF = validFactor(st.Dispersion.RandomFactor)
	}
	// the answer's start of untried picks while nothing is measured, found once for the call
	start, withStart := correction{}, false
	if !st.Dispersion.Global.measured() {
		if c, ok := pr.p.startCount(pr.p.GroupSize); ok {
			start, withStart = answerStart(c, pr.p.Kappa), true
		}
	}
	return func(p Prediction, tried, random bool) Prediction {
		if graded && p.Graded() {
			p.cal = st.Dispersion.Graded.gradedMap(gradedChannel(tried, random))
			if !pr.p.Lean {
				p.PDeg = p.PDegenerate(pr.p.GroupSize)
			}
		}
		if pr.p.DispersionMemory == 0 || p.Continuous || !(p.count > 0) || (p.stuck || p.extreme) && !random {
			return p
		}
		if !tried && !st.Dispersion.Global.measured() { // nothing measured: the answer's start
			if withStart {
				p = pr.corrected(p, start)
			}
			if random {
				return p
			}
		}
		if !tried && !random {
			return pr.untried(st.Dispersion, p)
		}
		if tried && !random && lowF > 0 {
			if mm, n := reK.apply(p.preMean(), p.count, p.centre); lowValue(mm, n) {
				k := reK
				k.scale *= lowF
				return pr.corrected(p, k)
			}
		}
		m := &kinds[b2i(tried)][b2i(random)]
		if !m.worked {
			m.k, m.ok = pr.pickCorrection(st.Dispersion, tried, random)
			m.worked = true
		}
		q := p
		if m.ok {
			q = pr.corrected(p, m.k)
		}
		if random && randF > 0 && !p.graded {
			q = pr.scaled(q, randF)
		}
		return q
	}
}

// untried is the pick of a task never tried that selection chose: its posterior's mean
// moved by the never-tried offset (Params.NewShift), then its count multiplied by the
// never-tried factor (see Pick); p itself when both are off or unmeasured, or p's
// environment has graded rewards.
func (pr *Predictor) untried(d Dispersion, p Prediction) Prediction {
	f, off := validFactor(d.NewFactor), 0.0
	if pr.p.NewShift {
		off = validOffset(d.NewOffset)
	}
	if !pr.p.NewMatch || f == 0 && off == 0 || p.graded {
		return p
	}
	if off == 0 {
		return pr.scaled(p, f)
	}
	if f == 0 {
		f = 1
	}
	return pr.shifted(p, off, f)
}

// shifted is p with its posterior's mean moved by off in logits and its count multiplied by
// f.
func (pr *Predictor) shifted(p Prediction, off, f float64) Prediction {
	n := p.Alpha + p.Beta
	m := sigmoid(logit(p.Alpha/n) + off)
	a, b := m*n*f, (1-m)*n*f
	q := p
	q.Alpha, q.Beta, q.Mean, q.SD = a, b, a/(a+b), betaSD(a, b)
	if old := BetaVariance(p.Alpha, p.Beta); old > 0 {
		q.Var = min(clamp01(p.Var*BetaVariance(a, b)/old), 0.25)
	}
	q.PDeg = q.PDegenerate(pr.p.GroupSize)
	return q
}

// scaled is p with its posterior's count multiplied by f, its mean kept.
func (pr *Predictor) scaled(p Prediction, f float64) Prediction {
	q := p
	q.Alpha, q.Beta = p.Alpha*f, p.Beta*f
	q.SD = betaSD(q.Alpha, q.Beta)
	if old := BetaVariance(p.Alpha, p.Beta); old > 0 {
		q.Var = min(clamp01(p.Var*BetaVariance(q.Alpha, q.Beta)/old), 0.25)
	}
	q.PDeg = q.PDegenerate(pr.p.GroupSize)
	return q
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// corrected is p with the pick's correction k applied (see Pick).
func (pr *Predictor) corrected(p Prediction, k correction) Prediction {
	m, n := k.apply(p.preMean(), p.count, p.centre)
	a, b := m*n, (1-m)*n
	q := p
	q.Alpha, q.Beta, q.Mean, q.SD = a, b, a/(a+b), betaSD(a, b)
	if old := BetaVariance(p.Alpha, p.Beta); old > 0 {
		q.Var = min(clamp01(p.Var*BetaVariance(a, b)/old), 0.25)
	}
	q.PDeg = q.PDegenerate(pr.p.GroupSize)
	return q
}

// pickCorrection is the correction of a pick (see Pick), false when the channel's own
// correction stands.
func (pr *Predictor) pickCorrection(d Dispersion, tried, random bool) (correction, bool) {
	switch {
	case random && d.Random.measured():
		ref := d.Global
		if tried {
			ref = d.Rechose
		}
		return correctionOf(d.Random, ref, pr.p.DispersionPrior, pr.p.DispersionByMean, pr.p.DispersionByCount), true
	case random || !tried || !pr.p.DispersionMatch || validFactor(d.RechosenFactor) == 0:
		return correction{}, false
	}
	k := correctionOf(d.Rechose, nil, 0, pr.p.DispersionByMean, pr.p.DispersionByCount)
	k.scale *= d.RechosenFactor
	return k, true
}
