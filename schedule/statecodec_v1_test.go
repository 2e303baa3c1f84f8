package schedule

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/envsched/envsched/propagate"
)

// TestStateVersion1IsStillRead: a state stored by the build before the baselines held each
// task's own mean and evidence age (version 1) decodes with both 0, and the rest as stored;
// the current version keeps both.
func TestStateVersion1IsStillRead(t *testing.T) {
	f := func(b []byte, x float64) []byte { return binary.LittleEndian.AppendUint64(b, math.Float64bits(x)) }
	v1 := []byte{stateVersion1, 0} // no drift offsets
	v1 = f(v1, 0.25)               // re-chosen offset
	v1 = append(v1, 1, 1, 'a')     // one environment, "a"
	v1 = append(v1, 1, 0, 1, 'x')  // one entry: environment 0, task "x"
	v1 = binary.AppendVarint(v1, 16)
	v1 = f(f(v1, 9), 0.5)
	v1 = append(v1, 1) // tried
	v1 = f(f(f(v1, 0.55), 6), -0.2)
	v1 = binary.AppendVarint(v1, 2)
	v1 = append(v1, 0, 0) // no dispersion, no prior start
	got, err := decodeSaved(v1)
	if err != nil {
		t.Fatal(err)
	}
	want := savedState{Rechosen: 0.25, Baseline: []baselineEntry{{Baseline: propagate.Baseline{Env: "a", Task: "x",
		Rollouts: 16, Sum: 9, Mean: 0.5, Tried: true, Pred: 0.55, Count: 6, Centre: -0.2}, Age: 2}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("version 1 decoded as %+v, want %+v", got, want)
	}
	want.Baseline[0].Own, want.Baseline[0].Stale = 0.6, 3
	data, err := encodeState(&want)
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodeSaved(data)
	if err != nil || !reflect.DeepEqual(back, want) {
		t.Fatalf("current version decoded as %+v, %v; want %+v", back, err, want)
	}
}

// TestStateVersion2IsStillRead: a state stored with its dispersion as JSON (version 2)
// decodes to what the same state decodes to in the current form.
func TestStateVersion2IsStillRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	seen := 0
	for range 300 {
		st := randState(rng)
		if st.Dispersion == nil {
			continue
		}
		seen++
		withoutRetries(st)
		st.Dispersion.Global = &propagate.Likelihood{LL: []float64{-1.5, -2.25, -1e6}, N: 3}
		st.Dispersion.Env = map[string]*propagate.Likelihood{"b": {LL: []float64{-0.5}, N: 1}, "a": nil}
		cur, err := encodeState(st)
		if err != nil {
			t.Fatal(err)
		}
		disp := st.Dispersion
		st.Dispersion = nil
		none, err := encodeStateAs(st, stateVersion3) // version 2's baseline entries are version 3's
		if err != nil {
			t.Fatal(err)
		}
		tail := len(binary.AppendUvarint(nil, uint64(len(st.PriorStart)))) + len(st.PriorStart)
		at := len(none) - tail - 1 // the byte that says "no dispersion"
		js, err := json.Marshal(disp)
		if err != nil {
			t.Fatal(err)
		}
		v2 := append([]byte{stateVersion2}, none[1:at]...)
		v2 = append(binary.AppendUvarint(v2, uint64(len(js))+1), js...)
		v2 = append(v2, none[at+1:]...)
		want, err := decodeSaved(cur)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeSaved(v2)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || !sameBits(got, want) {
			t.Fatalf("version 2 decoded as %+v, the current form as %+v", got, want)
		}
		if cur[0] != stateVersion || cur[0] == stateVersion2 {
			t.Fatalf("encoded as version %d", cur[0])
		}
	}
	if seen == 0 {
		t.Fatal("no state with a dispersion drawn")
	}
}

// withoutRetries clears what version 3 did not store: the baseline entries' cover flags,
// group counts, graded chances and start flags.
func withoutRetries(st *savedState) {
	for i := range st.Baseline {
		b := &st.Baseline[i].Baseline
		b.Cover, b.Groups, b.Degenerate, b.Graded, b.Start = false, 0, 0, 0, false
	}
}

// TestStateVersion3IsStillRead: a state stored by the build before the baseline entries held
// the cover flag and the group counts (version 3) decodes to the same state without them, and
// the current version keeps them.
func TestStateVersion3IsStillRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	seen := 0
	for range 300 {
		st := randState(rng)
		v3, err := encodeStateAs(st, stateVersion3)
		if err != nil {
			t.Fatal(err)
		}
		cur, err := encodeState(st)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeSaved(cur)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeSaved(v3)
		if err != nil {
			t.Fatal(err)
		}
		withoutRetries(&back)
		if !reflect.DeepEqual(got, back) || !sameBits(got, back) {
			t.Fatalf("version 3 decoded as %+v, want %+v", got, back)
		}
		for _, e := range st.Baseline {
			if e.Cover || e.Groups != 0 {
				seen++
			}
		}
	}
	if seen == 0 {
		t.Fatal("no baseline entry with a cover flag or group counts drawn")
	}
}

// TestStateBeforeGradedChancesIsStillRead: a state as the build before the graded calibration
// stored it (version 4 without flag 8, its dispersion in version 3: a stuck map, no graded
// maps) decodes with no graded chance and no maps, shows none, and is encoded again to the
// very same bytes: a database that never measured a graded pick stores what it stored.
func TestStateBeforeGradedChancesIsStillRead(t *testing.T) {
	f := func(b []byte, x float64) []byte { return binary.LittleEndian.AppendUint64(b, math.Float64bits(x)) }
	stuck := &propagate.Trend{N: 3}
	stuck.Beta[0], stuck.Info[0] = 0.5, 2
	d := []byte{3, 0, 0, 0, 0}                                                   // version 3: no environments, no global, re-chosen, random
	d = f(d, 1.25)                                                               // re-chosen factor
	d = append(d, 0, 0, 0, 0, 0, 0)                                              // no signals, no trend, no cover or exploit signal
	for _, x := range append(append(stuck.Beta[:], stuck.Info[:]...), stuck.N) { // the stuck map
		d = f(d, x)
	}
	old := []byte{stateVersion, 0} // no drift offsets
	old = f(old, 0.25)             // re-chosen offset
	old = append(old, 1, 1, 'a')   // one environment, "a"
	old = append(old, 1, 0, 1, 'x')
	old = binary.AppendVarint(old, 16)
	old = f(f(old, 9), 0.5)
	old = append(old, 1|4) // tried, cover
	old = f(f(f(old, 0.55), 6), -0.2)
	old = binary.AppendVarint(old, 2)
	old = f(f(old, 0.6), 3)
	old = binary.AppendVarint(binary.AppendVarint(old, 4), 1) // groups, degenerate
	old = append(binary.AppendUvarint(old, uint64(len(d))+1), d...)
	old = append(old, 0) // no prior start
	got, err := decodeSaved(old)
	if err != nil {
		t.Fatal(err)
	}
	if e := got.Baseline[0]; e.Graded != 0 || e.Groups != 4 || e.Degenerate != 1 || !e.Cover {
		t.Errorf("entry decoded as %+v", e)
	}
	if got.Dispersion == nil || got.Dispersion.Graded != nil || got.Dispersion.Stuck == nil || *got.Dispersion.Stuck != *stuck {
		t.Fatalf("dispersion decoded as %+v", got.Dispersion)
	}
	if c := Corrections(old); c.State != CorrectionsStored || c.GradedMaps != nil || c.StuckMap == nil {
		t.Errorf("corrections of the state: %s, graded maps %v, stuck map %v", c.State, c.GradedMaps, c.StuckMap)
	}
	again, err := encodeState(&got)
	if err != nil || !bytes.Equal(again, old) {
		t.Errorf("encoded again as %x (%v), stored %x", again, err, old)
	}
}
