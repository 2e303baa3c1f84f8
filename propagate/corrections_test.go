package propagate

import (
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
