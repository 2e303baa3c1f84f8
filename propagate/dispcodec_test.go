package propagate

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// randomDispersion draws a Dispersion with each part present or not, empty or not.
func randomDispersion(rng *rand.Rand) Dispersion {
	like := func() *Likelihood {
		switch rng.IntN(4) {
		case 0:
			return nil
		case 1:
			return &Likelihood{N: rng.Float64()}
		}
		l := &Likelihood{LL: make([]float64, rng.IntN(600)), N: rng.NormFloat64() * 100}
		for j := range l.LL {
			l.LL[j] = -rng.ExpFloat64() * math.Pow(10, float64(rng.IntN(8)))
		}
		return l
	}
	sig := func() *Signal {
		if rng.IntN(2) == 0 {
			return nil
		}
		return &Signal{Sum: rng.Float64() * 50, N: math.Copysign(rng.Float64()*80, float64(rng.IntN(2))-0.5)}
	}
	var d Dispersion
	switch rng.IntN(3) {
	case 0:
	case 1:
		d.Env = map[string]*Likelihood{}
	default:
		d.Env = map[string]*Likelihood{}
		for k := range rng.IntN(25) {
			d.Env[fmt.Sprintf("env-%d-ü\"\\%d", k, rng.IntN(3))] = like()
		}
	}
	d.Global, d.Rechose, d.Random = like(), like(), like()
	if rng.IntN(2) == 0 {
		d.RechosenFactor = rng.Float64() * 3
	}
	d.NewSignal, d.ReSignal, d.RandSignal = sig(), sig(), sig()
	if rng.IntN(2) == 0 {
		d.Trend = &Trend{N: rng.Float64() * 30}
		for j := range d.Trend.Beta {
			d.Trend.Beta[j] = rng.NormFloat64()
		}
		for j := range d.Trend.Info {
			d.Trend.Info[j] = rng.NormFloat64() * 1e3
		}
	}
	d.CoverSignal, d.ExploitSignal = sig(), sig()
	if rng.IntN(2) == 0 {
		d.Stuck = &Trend{N: rng.Float64() * 30}
		for j := range d.Stuck.Beta {
			d.Stuck.Beta[j] = rng.NormFloat64()
		}
		for j := range d.Stuck.Info {
			d.Stuck.Info[j] = rng.NormFloat64() * 1e3
		}
	}
	return d
}

// TestDispersionVersion3OnlyWithAStuckMap: a Dispersion with no stuck map is written as
// version 2, the bytes of the build before it; with one, as version 3: the same bytes after
// the version, then the map, which decodes back; a version 3 form without the map does not
// decode.
func TestDispersionVersion3OnlyWithAStuckMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 17))
	seen := 0
	for i := range 200 {
		d := randomDispersion(rng)
		if d.Stuck == nil {
			continue
		}
		seen++
		with, err := d.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		bare := d
		bare.Stuck = nil
		without, err := bare.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if with[0] != dispersionVersion3 || without[0] != dispersionVersion {
			t.Fatalf("draw %d: versions %d and %d, want 3 with the map and 2 without", i, with[0], without[0])
		}
		if string(with[1:len(without)]) != string(without[1:]) || len(with) != len(without)+8*(2*trendDim+trendDim*trendDim+1)-8*trendDim {
			t.Fatalf("draw %d: version 3 is not version 2 and the map (%d and %d bytes)", i, len(with), len(without))
		}
		var got Dispersion
		if err := got.UnmarshalBinary(with); err != nil {
			t.Fatalf("draw %d: %v", i, err)
		}
		if got.Stuck == nil || *got.Stuck != *d.Stuck {
			t.Fatalf("draw %d: stuck map %+v, want %+v", i, got.Stuck, d.Stuck)
		}
		var old Dispersion
		if err := old.UnmarshalBinary(without); err != nil || old.Stuck != nil {
			t.Fatalf("draw %d: version 2: %v, stuck map %+v", i, err, old.Stuck)
		}
		if err := new(Dispersion).UnmarshalBinary(append([]byte{dispersionVersion3}, without[1:]...)); err == nil {
			t.Fatalf("draw %d: version 3 without its map decoded", i)
		}
	}
	if seen == 0 {
		t.Fatal("no draw had a stuck map")
	}
}

// TestDispersionVersion1IsStillRead: a Dispersion stored before the cover and exploitation
// signals (version 1: the same bytes without them at the end) decodes to the same Dispersion
// without them; a version 2 form cut before them does not decode.
func TestDispersionVersion1IsStillRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 15))
	for i := range 200 {
		d := randomDispersion(rng)
		d.CoverSignal, d.ExploitSignal, d.Stuck = nil, nil, nil
		bin, err := d.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if bin[0] != dispersionVersion || bin[len(bin)-1] != 0 || bin[len(bin)-2] != 0 {
			t.Fatalf("draw %d: version %d, ends % x: want two absent signals at the end", i, bin[0], bin[len(bin)-2:])
		}
		v1 := append([]byte{dispersionVersion1}, bin[1:len(bin)-2]...)
		var got, want Dispersion
		if err := got.UnmarshalBinary(v1); err != nil {
			t.Fatalf("draw %d: version 1: %v", i, err)
		}
		if err := want.UnmarshalBinary(bin); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("draw %d: version 1 decodes to\n%+v\nwant\n%+v", i, got, want)
		}
		if err := new(Dispersion).UnmarshalBinary(append([]byte{dispersionVersion}, v1[1:]...)); err == nil {
			t.Fatalf("draw %d: version 2 without its last signals decoded", i)
		}
	}
}

// A Dispersion decodes from its binary form to what it decodes to from its JSON, the stored
// form before: the same numbers, the same nil and empty parts.
func TestDispersionBinaryIsItsJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	for i := range 400 {
		d := randomDispersion(rng)
		js, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var want Dispersion
		if err := json.Unmarshal(js, &want); err != nil {
			t.Fatal(err)
		}
		bin, err := d.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		got := Dispersion{Env: map[string]*Likelihood{"old": nil}} // dropped by the decoding
		if err := got.UnmarshalBinary(bin); err != nil {
			t.Fatalf("draw %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("draw %d: binary decodes to\n%+v\nJSON to\n%+v", i, got, want)
		}
		again, _ := got.MarshalBinary()
		if string(again) != string(bin) {
			t.Fatalf("draw %d: decoded and encoded again, other bytes", i)
		}
		if i < 10 {
			for cut := range len(bin) {
				if err := new(Dispersion).UnmarshalBinary(bin[:cut]); err == nil {
					t.Fatalf("draw %d: %d of %d bytes decoded", i, cut, len(bin))
				}
			}
		}
	}
}

// A number JSON refuses (not finite, outside the log-likelihoods) is refused by the binary
// form too, both ways; a damaged form is an error, never a panic.
func TestDispersionBinaryRefusesWhatJSONRefuses(t *testing.T) {
	for name, d := range map[string]Dispersion{
		"factor":      {RechosenFactor: math.NaN()},
		"signal":      {ReSignal: &Signal{Sum: math.Inf(1)}},
		"trend":       {Trend: &Trend{N: math.NaN()}},
		"global n":    {Global: &Likelihood{N: math.Inf(-1)}},
		"environment": {Env: map[string]*Likelihood{"a": {N: math.NaN()}}},
	} {
		if _, err := json.Marshal(d); err == nil {
			t.Fatalf("%s: JSON took it", name)
		}
		if _, err := d.MarshalBinary(); err == nil {
			t.Errorf("%s: encoded", name)
		}
	}
	good, _ := Dispersion{RechosenFactor: 1, NewSignal: &Signal{Sum: 1, N: 2}}.MarshalBinary()
	nan := append([]byte(nil), good...)
	copy(nan[5:13], []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f}) // the factor's bits: a NaN
	for name, b := range map[string][]byte{
		"version":      append([]byte{9}, good[1:]...),
		"trailing":     append(append([]byte(nil), good...), 0),
		"flag 2":       append(append([]byte(nil), good[:len(good)-1]...), 2),
		"huge count":   {dispersionVersion, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"not finite":   nan,
		"a name twice": {dispersionVersion, 3, 1, 'a', 0, 1, 'a', 0, 0, 0, 0},
	} {
		if err := new(Dispersion).UnmarshalBinary(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// TestDispersionVersion6OnlyWithARandomFactor (Params.RandomMatch): a Dispersion with a
// random-slot factor or window is written as version 6 and decodes back to itself and to what
// its JSON decodes to, graded maps and the never-tried factor with it; without them it is
// written in the bytes of the build before (the version its other parts ask for).
func TestDispersionVersion6OnlyWithARandomFactor(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 19))
	for i := range 300 {
		d := randomDispersion(rng)
		if rng.IntN(2) == 0 {
			d.NewFactor, d.NewPending = 0.5+rng.Float64(), []MatchGroup{{Mean: 0.3, Count: 2, N: 8, K: 1}}
		}
		if rng.IntN(2) == 0 {
			d.Graded = &GradedCal{Random: &Trend{N: 3, Beta: [trendDim]float64{0.1, 0.9}}}
		}
		without, err := d.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		with := d
		switch rng.IntN(3) {
		case 0:
			with.RandomFactor = 0.25 + rng.Float64()
		case 1:
			with.RandomWindow = []MatchGroup{{Mean: rng.Float64(), Count: 1 + rng.Float64(), N: 8, K: int64(rng.IntN(9))}}
		default:
			with.RandomFactor = 2
			for range rng.IntN(40) {
				with.RandomWindow = append(with.RandomWindow, MatchGroup{Mean: rng.Float64(), Count: rng.Float64() * 9, N: 4, K: int64(rng.IntN(5))})
			}
		}
		got := versionedRoundTrip(t, i, with, without, dispersionVersion6, "the factor")
		if got.RandomFactor != with.RandomFactor || len(got.RandomWindow) != len(with.RandomWindow) {
			t.Fatalf("draw %d: factor %v (%d groups), want %v (%d)", i, got.RandomFactor, len(got.RandomWindow), with.RandomFactor, len(with.RandomWindow))
		}
	}
}

// versionedRoundTrip encodes with (draw i), whose field added in version is set, and checks
// that it is written in that version while without (the same dispersion without it, encoded)
// is not, that it decodes to what its JSON round trip gives, and, for the first draws, that no
// prefix of it decodes; it returns what it decoded to. what names the field in messages.
func versionedRoundTrip(t *testing.T, i int, with Dispersion, without []byte, version byte, what string) Dispersion {
	t.Helper()
	bin, err := with.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if bin[0] != version || without[0] == version {
		t.Fatalf("draw %d: versions %d with %s, %d without: want %d, and the one before", i, bin[0], what, without[0], version)
	}
	var got Dispersion
	if err := got.UnmarshalBinary(bin); err != nil {
		t.Fatalf("draw %d: %v", i, err)
	}
	js, _ := json.Marshal(with)
	var want Dispersion
	if err := json.Unmarshal(js, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("draw %d: binary decodes to\n%+v\nJSON to\n%+v", i, got, want)
	}
	for cut := range len(bin) {
		if i < 5 && new(Dispersion).UnmarshalBinary(bin[:cut]) == nil {
			t.Fatalf("draw %d: %d of %d bytes decoded", i, cut, len(bin))
		}
	}
	return got
}
