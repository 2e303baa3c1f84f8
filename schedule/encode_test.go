package schedule

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/envsched/envsched/propagate"
)

// oddStrings are strings encoding/json escapes or rewrites, and plain ones.
var oddStrings = []string{
	"", "plain", "tau2-retail", `a"b`, `a\b`, "<tag>", "a&b", "tab\there", "nl\n", "\x00\x01\x1f", "\x7f",
	"é ü 中文", "bad \xff utf8", "\xc3", "line\u2028sep\u2029", "emoji 🙂", "ends<", "&",
}

// oddFloats are numbers at encoding/json's format boundaries.
var oddFloats = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.5, 1e-6, 9.99999e-7, 1e-7, -1e-7, 1e20, 1e21, -1e21, 1.5e300,
	5e-324, 2.2250738585072014e-308, 123456.789, 0.1 + 0.2, 1e15, 1e-9, 1.0000000000000002,
	math.MaxFloat64, -math.MaxFloat64,
}

func randFloat(rng *rand.Rand) float64 {
	switch rng.IntN(5) {
	case 0:
		return oddFloats[rng.IntN(len(oddFloats))]
	case 1:
		for {
			if x := math.Float64frombits(rng.Uint64()); !math.IsNaN(x) && !math.IsInf(x, 0) {
				return x
			}
		}
	case 2:
		return num(rng.Float64())
	case 3:
		return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(60)-30))
	}
	return rng.Float64()
}

func randString(rng *rand.Rand) string {
	if rng.IntN(3) == 0 {
		return oddStrings[rng.IntN(len(oddStrings))]
	}
	b := make([]byte, rng.IntN(12))
	for i := range b {
		b[i] = byte(rng.IntN(256))
		if rng.IntN(2) == 0 {
			b[i] = byte('a' + rng.IntN(26))
		}
	}
	return string(b)
}

func randAnswer(rng *rand.Rand) *Answer {
	a := &Answer{ID: randString(rng), Policy: Policy, Step: rng.Int64N(1 << 40), CreatedAt: "2026-12-03T00:00:00Z",
		Size: rng.IntN(1000), GroupSize: rng.IntN(9), RolloutsSeen: rng.Int64(), Seed: rng.Uint64(), Eligible: rng.IntN(1 << 20)}
	if rng.IntN(4) > 0 {
		a.Envs = map[string]int{}
		for range rng.IntN(5) {
			a.Envs[randString(rng)] = rng.IntN(100) - 10
		}
	}
	if rng.IntN(6) > 0 {
		a.Tasks = make([]Task, rng.IntN(20))
	}
	for i := range a.Tasks {
		a.Tasks[i] = Task{Env: randString(rng), TaskID: randString(rng), Rank: i + 1, Score: randFloat(rng),
			PredictedMean: randFloat(rng), PredictedVariance: randFloat(rng), PDegenerate: randFloat(rng),
			Exploit: randFloat(rng), Coverage: randFloat(rng), Penalty: randFloat(rng), Reason: randString(rng)}
	}
	return a
}

// randName is a random name as the catalogue and rollouts allow them: valid UTF-8 (the
// state's JSON form rewrote invalid bytes; the binary form keeps every byte).
func randName(rng *rand.Rand) string { return strings.ToValidUTF8(randString(rng), "\ufffd") }

func randState(rng *rand.Rand) *savedState {
	st := &savedState{Rechosen: randFloat(rng)}
	if rng.IntN(3) > 0 {
		st.DriftOffsets = map[string]float64{}
		for range rng.IntN(5) {
			st.DriftOffsets[randName(rng)] = randFloat(rng)
		}
	}
	for range rng.IntN(8) {
		e := baselineEntry{Baseline: propagate.Baseline{Env: randName(rng), Task: randName(rng),
			Rollouts: rng.Int64N(1000) - 5, Sum: randFloat(rng), Mean: randFloat(rng),
			Tried: rng.IntN(2) == 0, Random: rng.IntN(2) == 0}}
		if rng.IntN(2) == 0 {
			e.Pred, e.Count, e.Centre = randFloat(rng), randFloat(rng), randFloat(rng)
		}
		if rng.IntN(2) == 0 {
			e.Age = rng.IntN(5) - 1
		}
		if rng.IntN(2) == 0 {
			e.Cover, e.Groups, e.Degenerate = rng.IntN(2) == 0, rng.Int64N(100)-3, rng.Int64N(50)-3
			if rng.IntN(2) == 0 {
				e.Graded = 1e-6 + rng.Float64()*(1-2e-6)
			}
			e.Start = rng.IntN(2) == 0
		}
		st.Baseline = append(st.Baseline, e)
	}
	if rng.IntN(3) == 0 {
		st.Baseline = []baselineEntry{} // empty, not nil: omitted as well
	}
	if rng.IntN(2) == 0 {
		st.Dispersion = &propagate.Dispersion{}
		if rng.IntN(2) == 0 {
			st.Dispersion.RechosenFactor = randFloat(rng)
			st.Dispersion.NewSignal = &propagate.Signal{Sum: randFloat(rng), N: 3}
		}
		if rng.IntN(2) == 0 {
			st.Dispersion.CoverSignal = &propagate.Signal{Sum: randFloat(rng), N: 5}
			st.Dispersion.ExploitSignal = &propagate.Signal{Sum: randFloat(rng), N: 7}
		}
		if rng.IntN(3) == 0 {
			tr := &propagate.Trend{N: 2.5}
			tr.Beta[0], tr.Beta[1], tr.Info[0] = randFloat(rng), randFloat(rng), 4
			st.Dispersion.Graded = &propagate.GradedCal{Untried: tr}
			if rng.IntN(2) == 0 {
				st.Dispersion.Graded.Random, st.Dispersion.Stuck = tr, tr
			}
		}
	}
	if rng.IntN(2) == 0 {
		st.PriorStart = make([]byte, rng.IntN(40))
		for i := range st.PriorStart {
			st.PriorStart[i] = byte(rng.IntN(256))
		}
	}
	return st
}

// The answer's encoder gives json.Marshal's bytes, for answers with every kind of string and
// number json.Marshal treats apart; a state decodes from its binary form to what it decodes
// to from its JSON (the form an earlier version stored), number for number.
func TestEncodersAreJSONMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		a := randAnswer(rng)
		want, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := encodeAnswer(a); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("answer %d: got %s (%v)\nwant %s", i, got, err, want)
		}
		checkStateRoundTrip(t, randState(rng))
	}
}

// checkStateRoundTrip checks that st decodes from its binary encoding as from its JSON.
func checkStateRoundTrip(t *testing.T, st *savedState) {
	t.Helper()
	js, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	want, err := decodeSaved(js)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := encodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeSaved(bin)
	if err != nil {
		t.Fatalf("state %s: %v", js, err)
	}
	if !reflect.DeepEqual(got, want) || !sameBits(got, want) {
		t.Fatalf("state %s\ndecoded from its binary form as %+v\nfrom its JSON as %+v", js, got, want)
	}
	if again, _ := encodeState(&got); !bytes.Equal(again, bin) {
		t.Fatalf("state %s: encoded again, other bytes", js)
	}
}

// sameBits compares the floats of two states bit for bit (DeepEqual takes -0 for 0).
func sameBits(a, b savedState) bool {
	same := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
	if !same(a.Rechosen, b.Rechosen) || len(a.Baseline) != len(b.Baseline) {
		return false
	}
	for k, x := range a.DriftOffsets {
		if !same(x, b.DriftOffsets[k]) {
			return false
		}
	}
	for i, e := range a.Baseline {
		f := b.Baseline[i]
		if !same(e.Sum, f.Sum) || !same(e.Mean, f.Mean) || !same(e.Pred, f.Pred) || !same(e.Count, f.Count) || !same(e.Centre, f.Centre) ||
			!same(e.Graded, f.Graded) {
			return false
		}
	}
	return true
}

// A damaged binary state (cut anywhere, bytes added, counts beyond its length) is an error,
// never a panic or a huge allocation.
func TestDamagedBinaryState(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 50 {
		st := randState(rng)
		bin, err := encodeState(st)
		if err != nil {
			t.Fatal(err)
		}
		for n := 1; n < len(bin); n++ {
			if _, err := decodeSaved(bin[:n]); !errors.Is(err, errState) {
				t.Fatalf("state cut to %d of %d bytes: %v, want an error", n, len(bin), err)
			}
		}
		if _, err := decodeSaved(append(slices.Clone(bin), 0)); !errors.Is(err, errState) {
			t.Fatalf("a byte after the end: %v, want an error", err)
		}
	}
	huge := []byte{stateVersion, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}
	if _, err := decodeSaved(huge); !errors.Is(err, errState) {
		t.Fatalf("a count of 2^63 offsets: %v, want an error", err)
	}
	if _, err := decodeSaved(append([]byte{stateVersion, 0}, make([]byte, 8)...)); !errors.Is(err, errState) {
		t.Fatalf("no baseline: %v, want an error", err)
	}
}

// A number json.Marshal refuses is refused by the encoders too, wherever it is.
func TestEncodersRefuseNonFinite(t *testing.T) {
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		cases := map[string]func() error{
			"task score": func() error {
				_, err := encodeAnswer(&Answer{Tasks: []Task{{Score: x}}})
				return err
			},
			"task penalty": func() error {
				_, err := encodeAnswer(&Answer{Tasks: []Task{{}, {Penalty: x}}})
				return err
			},
			"rechosen": func() error { _, err := encodeState(&savedState{Rechosen: x}); return err },
			"offset": func() error {
				_, err := encodeState(&savedState{DriftOffsets: map[string]float64{"a": 1, "b": x}})
				return err
			},
			"baseline sum": func() error {
				_, err := encodeState(&savedState{Baseline: []baselineEntry{{Baseline: propagate.Baseline{Sum: x}}}})
				return err
			},
			"baseline centre": func() error {
				_, err := encodeState(&savedState{Baseline: []baselineEntry{{}, {Baseline: propagate.Baseline{Centre: x}}}})
				return err
			},
			"dispersion": func() error {
				_, err := encodeState(&savedState{Dispersion: &propagate.Dispersion{RechosenFactor: x}})
				return err
			},
		}
		for name, f := range cases {
			if f() == nil {
				t.Errorf("%s %v: encoded, want json.Marshal's error", name, x)
			}
		}
	}
}

// FuzzAnswerEncoding holds encodeAnswer to json.Marshal for any strings and numbers, and a
// state's binary form to its JSON.
func FuzzAnswerEncoding(f *testing.F) {
	for _, s := range oddStrings {
		f.Add(s, s, 0.5, int64(1))
	}
	f.Add("env", "task", 1e-7, int64(-3))
	f.Fuzz(func(t *testing.T, env, task string, x float64, n int64) {
		a := &Answer{ID: task, Envs: map[string]int{env: int(n), task: 1}, Step: n,
			Tasks: []Task{{Env: env, TaskID: task, Score: x, Penalty: -x, Reason: env + task}}}
		want, werr := json.Marshal(a)
		got, gerr := encodeAnswer(a)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("got %s (%v), want %s (%v)", got, gerr, want, werr)
		}
		if math.IsNaN(x) || math.IsInf(x, 0) || !utf8.ValidString(env) || !utf8.ValidString(task) {
			return // refused, and names are valid UTF-8 (see randName)
		}
		checkStateRoundTrip(t, &savedState{DriftOffsets: map[string]float64{env: x}, Rechosen: x,
			Baseline: []baselineEntry{{Baseline: propagate.Baseline{Env: env, Task: task, Sum: x, Pred: x, Rollouts: n}, Age: int(n % 7)}}})
	})
}

// A binary state holding a number that is not finite is damaged (the encoder never writes
// one, and JSON could not hold one): it is an error, not a state. A NaN evidence age (Stale)
// passes every check of the re-chosen trend's fit into its information matrix, which the
// dispersion's JSON then refuses (read from the code; not run end to end here).
func TestBinaryStateWithNonFiniteIsDamaged(t *testing.T) {
	marks := map[string]float64{"rechosen": 0.101, "offset": 0.102, "sum": 0.103, "mean": 0.104,
		"pred": 0.105, "count": 0.106, "centre": 0.107, "own": 0.108, "stale": 0.109}
	st := &savedState{Rechosen: marks["rechosen"], DriftOffsets: map[string]float64{"e": marks["offset"]},
		Baseline: []baselineEntry{{Baseline: propagate.Baseline{Env: "e", Task: "t", Rollouts: 8,
			Sum: marks["sum"], Mean: marks["mean"], Tried: true, Pred: marks["pred"], Count: marks["count"],
			Centre: marks["centre"], Own: marks["own"], Stale: marks["stale"]}, Age: 1}}}
	bin, err := encodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeSaved(bin); err != nil {
		t.Fatal(err)
	}
	for name, m := range marks {
		old := binary.LittleEndian.AppendUint64(nil, math.Float64bits(m))
		if bytes.Count(bin, old) != 1 {
			t.Fatalf("%s: its bits are not once in the state", name)
		}
		for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
			bad := bytes.Replace(bin, old, binary.LittleEndian.AppendUint64(nil, math.Float64bits(x)), 1)
			if _, err := decodeSaved(bad); !errors.Is(err, errState) {
				t.Errorf("%s %v: %v, want an error", name, x, err)
			}
		}
	}
}

// Bytes the encoder never writes decode to no state: flags beyond tried, random and cover (and
// cover in a state of version 3, which had no such flag), and an environment's drift offset
// twice (either would decode and encode again to other bytes).
func TestBinaryStateOddBytesRefused(t *testing.T) {
	st := &savedState{DriftOffsets: map[string]float64{"a": 1, "b": 2},
		Baseline: []baselineEntry{{Baseline: propagate.Baseline{Env: "e", Task: "t", Tried: true, Random: true}}}}
	bin, err := encodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(bin, []byte{1, 't'}) + 2 + 1 + 16 // the entry's task, rollouts, sum, mean
	if bin[i] != 3 {
		t.Fatalf("flags byte not found: %d", bin[i])
	}
	for _, f := range []byte{8, 15, 0x80} {
		bad := slices.Clone(bin)
		bad[i] = f
		if _, err := decodeSaved(bad); !errors.Is(err, errState) {
			t.Errorf("flags %#x: %v, want an error", f, err)
		}
	}
	v3, err := encodeStateAs(st, stateVersion3)
	if err != nil {
		t.Fatal(err)
	}
	v3[i] = 7
	if _, err := decodeSaved(v3); !errors.Is(err, errState) {
		t.Errorf("flags 0x7 in version 3: %v, want an error", err)
	}
	twice := slices.Clone(bin)
	j := bytes.Index(twice, []byte{1, 'b'})
	twice[j+1] = 'a'
	if _, err := decodeSaved(twice); !errors.Is(err, errState) {
		t.Errorf("an offset twice: %v, want an error", err)
	}
}
