package propagate

import (
	"encoding/json"
	"testing"
)

// TestCorrectionsShowWhatTheCallUsed: after a run in which every correction measured
// something, Corrections of the returned State shows the corrections the call predicted
// with (each environment's and the re-chosen channel's), its offsets and the factors
// selection reads.
func TestCorrectionsShowWhatTheCallUsed(t *testing.T) {
	w, c, _ := runDispersionChain(t, DefaultParams(), 2.5)
	st, d := c.st, &c.pr.drift
	got := st.Corrections()
	for e, name := range w.g.Envs {
		env, ok := got.Envs[name]
		if !ok {
			t.Fatalf("environment %s not shown: %+v", name, got.Envs)
		}
		if want := shown(d.scale[e], groupsOf(st.Dispersion.Env[name])); env.Correction != want {
			t.Errorf("%s: shown %+v, the call used %+v", name, env.Correction, want)
		}
		if env.Groups == 0 {
			t.Errorf("%s: no groups shown", name)
		}
		if env.DriftOffset != r4(st.Offsets[name]) {
			t.Errorf("%s: drift offset %v, state %v", name, env.DriftOffset, st.Offsets[name])
		}
	}
	if got.Envs["split"].Scale == got.Envs["even"].Scale {
		t.Errorf("both environments shown with scale %v: the split one should be far below", got.Envs["split"].Scale)
	}
	if want := shown(d.scaleRe, groupsOf(st.Dispersion.Rechose)); got.Dispersion["rechosen"] != want || want.Scale >= 1 {
		t.Errorf("re-chosen shown %+v, the call used %+v (below 1 when tried tasks jump)", got.Dispersion["rechosen"], want)
	}
	if got.RechosenOffset != r4(st.Rechosen) || got.RechosenTrend == nil || got.RechosenTrend.Groups != r4(st.Dispersion.Trend.N) {
		t.Errorf("re-chosen offset %v and trend %+v, state %v and %+v", got.RechosenOffset, got.RechosenTrend, st.Rechosen, st.Dispersion.Trend)
	}
	if got.ExplorationReturn.Factor != r4(st.ExplorationReturn()) || got.ExplorationReturn.Groups == 0 || got.ExplorationReturn.ReferenceGroups == 0 {
		t.Errorf("exploration return shown %+v, state's factor %v", got.ExplorationReturn, st.ExplorationReturn())
	}
}

// TestCorrectionsOfNothingMeasured: the first answer's state shows the start scale for tasks
// never tried (random slots with them), the re-chosen channel uncorrected, every factor 1.
func TestCorrectionsOfNothingMeasured(t *testing.T) {
	got := State{}.Corrections()
	start := Correction{Scale: DefaultParams().DispersionStart, Slope: 1, Theta: 1}
	unit := Correction{Scale: 1, Slope: 1, Theta: 1}
	if got.Dispersion["never_tried"] != start || got.Dispersion["random_slot"] != start || got.Dispersion["rechosen"] != unit {
		t.Errorf("dispersion %+v", got.Dispersion)
	}
	one := Return{Factor: 1}
	if got.ExplorationReturn != one || got.RandomReturn != one || got.CoverageReturn != one || got.RechosenFactor != 1 ||
		got.RechosenTrend != nil || len(got.Envs) != 0 {
		t.Errorf("%+v", got)
	}
}

// TestCorrectionsShowTheCoverageReturn: the coverage return's factor and its groups on both
// sides (the case of TestCoverReturn where coverage re-tries never returned an informative
// group: (0 + 32·0.8) / (96 + 32) / 0.8 = 0.25).
func TestCorrectionsShowTheCoverageReturn(t *testing.T) {
	st := State{Dispersion: Dispersion{CoverSignal: &Signal{Sum: 0, N: 96}, ExploitSignal: &Signal{Sum: 80, N: 100}}}
	if got, want := st.Corrections().CoverageReturn, (Return{Factor: 0.25, Groups: 96, ReferenceGroups: 100}); got != want {
		t.Errorf("coverage return shown %+v, want %+v", got, want)
	}
}

// TestCorrectionsOfAnEarlierVersionsState: a state as the build of 649802b stored it (each
// likelihood {"ll": [52 numbers], "n": N}, which decodes today to no log-likelihoods and a
// count) and one with the 13 of the first grid show what a call starting from them uses: the
// likelihoods left out, as drift.start leaves them out; offsets beyond their bounds clamped.
// Before, the fit read past the end of the likelihoods and panicked, and with it the daemon's
// status, `envsched stats`, the report and the metrics.
func TestCorrectionsOfAnEarlierVersionsState(t *testing.T) {
	ll := make([]float64, 52)
	for j := range ll {
		ll[j] = -float64(j)
	}
	old, _ := json.Marshal(map[string]any{"n": 30, "ll": ll})
	raw := `{"env": {"web": ` + string(old) + `}, "global": ` + string(old) + `, "rechosen": ` + string(old) +
		`, "random": ` + string(old) + `, "new_signal": {"sum": 10, "n": 40}, "re_signal": {"sum": 20, "n": 40}}`
	var d Dispersion
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		t.Fatal(err)
	}
	short := &Likelihood{LL: make([]float64, len(scaleGrid)), N: 5}
	p := DefaultParams()
	for name, disp := range map[string]Dispersion{"ll of 649802b": d,
		"13 scales": {Env: map[string]*Likelihood{"web": short}, Global: short, Rechose: short, Random: short,
			NewSignal: d.NewSignal, ReSignal: d.ReSignal}} {
		st := State{Offsets: map[string]float64{"web": 5}, Rechosen: -7, Dispersion: disp}
		var got Corrections
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("%s: Corrections panicked: %v", name, r)
				}
			}()
			got = st.Corrections()
		}()
		start := Correction{Scale: p.DispersionStart, Slope: 1, Theta: 1}
		if got.Dispersion["never_tried"] != start || got.Dispersion["random_slot"] != start ||
			got.Envs["web"].Correction != start || got.Dispersion["rechosen"] != (Correction{Scale: 1, Slope: 1, Theta: 1}) {
			t.Errorf("%s: dispersion %+v, web %+v; want the start, as a call uses", name, got.Dispersion, got.Envs["web"])
		}
		if got.Envs["web"].DriftOffset != p.DriftMax || got.RechosenOffset != -p.RechosenMax {
			t.Errorf("%s: offsets %v and %v; want them within ±%v and ±%v", name, got.Envs["web"].DriftOffset,
				got.RechosenOffset, p.DriftMax, p.RechosenMax)
		}
		if got.ExplorationReturn != (Return{Factor: 0.5, Groups: 40, ReferenceGroups: 40}) {
			t.Errorf("%s: exploration return %+v", name, got.ExplorationReturn)
		}
	}
}

// TestCorrectionsShowWhatPicksUse: the random_slot correction and the re-chosen factor shown
// are those Pick applies to the answer's picks: a random slot of a task never tried gets the
// correction shown as random_slot, its count times random_factor, a re-chosen pick the re-chosen correction with its count
// times rechosen_factor. (Random slots are marked in the "split" environment, so that their
// correction is measured and differs from the never-tried one.)
func TestCorrectionsShowWhatPicksUse(t *testing.T) {
	w := newDispersionWorld()
	p := DefaultParams()
	p.LowMatch = false // this world's re-tries teach little: all would be the low factor's (TestLowValueRechosenPickAnswered)
	c := newChain(t, p)
	var preds []Prediction
	for round := int64(1); round <= 16; round++ {
		preds = c.call(t, w.g, w.tasks, round)
		for i := range c.st.Baseline {
			c.st.Baseline[i].Random = w.g.Nodes[i].Env == 0
		}
		if round < 16 {
			w.round(round, 2.5)
		}
	}
	st, d := c.st, c.st.Dispersion
	got := st.Corrections()
	if !d.Random.measured() || validFactor(d.RechosenFactor) == 0 {
		t.Fatalf("random slots measured %v, re-chosen factor %v: the world should measure both", d.Random.measured(), d.RechosenFactor)
	}
	var untried, tried = -1, -1
	for i, p := range preds {
		if p.Continuous || !(p.count > 0) {
			continue
		}
		if w.tasks[i].Rollouts == 0 && untried < 0 {
			untried = i
		}
		if w.tasks[i].Rollouts > 0 && tried < 0 {
			tried = i
		}
	}
	if untried < 0 || tried < 0 {
		t.Fatalf("no untried (%d) or tried (%d) task", untried, tried)
	}
	find := func(want Correction) correction {
		for _, k := range dispersionGrid {
			if shown(k, want.Groups) == want {
				return k
			}
		}
		t.Fatalf("no correction of the grid is shown as %+v", want)
		return correction{}
	}
	random := find(got.Dispersion["random_slot"])
	wantRandom := c.pr.corrected(preds[untried], random)
	if f := validFactor(d.RandomFactor); f > 0 { // its count times random_factor (RandomMatch)
		wantRandom = c.pr.scaled(wantRandom, f)
	}
	if r4(d.randomFactor()) != got.RandomFactor || len(d.RandomWindow) != got.RandomGroups {
		t.Errorf("random-slot factor shown %v on %d groups, state %v on %d", got.RandomFactor, got.RandomGroups, d.RandomFactor, len(d.RandomWindow))
	}
	if q := c.pr.Pick(st, preds[untried], false, true); q != wantRandom {
		t.Errorf("random slot: Pick gives %+v; the shown random_slot %+v times random_factor %v gives %+v", q, got.Dispersion["random_slot"], got.RandomFactor, wantRandom)
	}
	if got.Dispersion["random_slot"] == got.Dispersion["never_tried"] {
		t.Errorf("random_slot shown as never_tried (%+v): the test cannot tell them apart", got.Dispersion["never_tried"])
	}
	re := find(got.Dispersion["rechosen"])
	re.scale *= d.RechosenFactor
	if r4(d.RechosenFactor) != got.RechosenFactor {
		t.Errorf("re-chosen factor shown %v, state %v", got.RechosenFactor, d.RechosenFactor)
	}
	if q, want := c.pr.Pick(st, preds[tried], true, false), c.pr.corrected(preds[tried], re); q != want {
		t.Errorf("re-chosen pick: Pick gives %+v; the shown correction times the factor gives %+v", q, want)
	}
}
