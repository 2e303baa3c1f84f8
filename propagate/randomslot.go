package propagate

// RandomSlot returns p, the prediction of a task that selection drew into a random slot,
// with the correction that the groups of random slots measured (Dispersion.Random, shrunk
// towards the likelihood of the task's channel by Params.DispersionPrior groups) in place of
// its channel's; st is the State returned by the call that made p, tried whether the task
// had been rolled out then. The channels' corrections are fitted on groups that are mostly
// selection's picks, which sit near ½ with the most evidence behind them; a random slot is
// drawn whatever its prediction, so a correction that is honest for the one is not for the
// other. Only what the answer says of the task changes (Alpha, Beta, Mean, Var, SD, PDeg);
// what the dispersion and drift measurements read of p (its mean and count before the
// correction) does not, so the baselines of a random slot are those of any pick. p is
// returned unchanged while no random slot is measured, with the correction off, and for a
// task with continuous rewards (which the correction never measures).
func (pr *Predictor) RandomSlot(st State, p Prediction, tried bool) Prediction {
	d := st.Dispersion
	if pr.p.DispersionMemory == 0 || !d.Random.measured() || p.Continuous || !(p.count > 0) {
		return p
	}
	ref := d.Global
	if tried {
		ref = d.Rechose
	}
	k := correctionOf(d.Random, ref, pr.p.DispersionPrior, pr.p.DispersionByMean, pr.p.DispersionByCount)
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
