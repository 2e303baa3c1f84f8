package schedule

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/envsched/envsched/propagate"
)

// The predictor state stored with every answer is written in a compact binary form: a
// version byte, then its fields with numbers as their exact bits. As JSON it was about 200
// bytes a baseline entry (four answers' worth of entries), ~440 KB in all at 100k tasks with
// batches of 512, encoded and written to the database (a fresh run of overflow pages) with
// every answer; in this form it is less than half of that (~190 KB, and 16 bytes an entry more
// since version 2, ~33 KB). It decodes to the very numbers that were encoded, so the next
// answer is the same either way; a state stored as JSON by an earlier version is still read.
//
//	stateVersion
//	drift offsets: uvarint n+1 (0: none), then n × (name, float64)
//	re-chosen offset: float64
//	environment names of the baseline: uvarint n, n × name
//	baseline: uvarint n, n × entry
//	  entry: uvarint environment (index above), task name, varint rollouts, float64 sum, mean,
//	         byte flags (1 tried, 2 random, 4 cover: not before version 4), float64 pred, count,
//	         centre (−0 as +0), varint age, float64 own, stale (−0 as +0; not in version 1),
//	         varint groups, degenerate (since version 4), float64 graded (when flag 8 is set:
//	         a graded pick's chance before the graded calibration, propagate.Baseline.Graded);
//	         flag 16: answered with the start (propagate.Baseline.Start)
//	dispersion: uvarint length of its encoding + 1 (0: none), the encoding: since version 3
//	            propagate.Dispersion's binary form, before it its JSON (both round the
//	            log-likelihoods to float32 and decode to the same numbers)
//	prior start: uvarint length, the bytes
//
// A name is a uvarint length and its bytes; a float64 its IEEE bits, little-endian.

// stateVersion is the first byte of a binary state; a JSON state begins with '{' or 'n'.
// Version 1 had no own mean and evidence age in its baseline entries (the re-chosen trend
// reads them); it is still read, with both 0, which the trend does not measure.
// Version 2 stored the dispersion as JSON (about a millisecond a request to encode at 100k
// tasks); it is still read.
// Version 3 had no cover flag and no group counts in its baseline entries (what re-tries
// return is measured from them: propagate.State.CoverReturn); it is still read, with none,
// which measures nothing. Flag 8 (the graded chance) came within version 4: an entry without
// it, as every entry of a state stored before, measures no graded calibration, and a database
// whose rewards are all 0 or 1 stores the bytes it stored. Flag 16 (answered with the start)
// came within version 4 too: only the never-tried picks of the answers made before anything
// was measured carry it, and an entry stored without it is matched as before.
const (
	stateVersion  = 0x04
	stateVersion3 = 0x03
	stateVersion2 = 0x02
	stateVersion1 = 0x01
)

// errState is wrapped by the errors of a binary state that does not decode.
var errState = errors.New("binary predictor state")

// errNotFinite is the error of a state holding a number that is not finite, which no
// prediction should make: as JSON once did, the state refuses it rather than store it.
var errNotFinite = errors.New("predictor state: a number is not finite")

// encodeState encodes st in the binary form.
func encodeState(st *savedState) ([]byte, error) { return encodeStateAs(st, stateVersion) }

// encodeStateAs encodes st in the binary form of version v, stateVersion3 or stateVersion:
// version 3 leaves out what it did not hold (the tests write states of the build before with
// it).
func encodeStateAs(st *savedState, v byte) ([]byte, error) {
	if !st.finite() {
		return nil, errNotFinite
	}
	b := make([]byte, 0, 64+len(st.Baseline)*64+len(st.PriorStart))
	b = append(b, v)
	if st.DriftOffsets == nil {
		b = binary.AppendUvarint(b, 0)
	} else {
		keys := make([]string, 0, len(st.DriftOffsets))
		for k := range st.DriftOffsets {
			keys = append(keys, k)
		}
		slices.Sort(keys) // the same state, the same bytes
		b = binary.AppendUvarint(b, uint64(len(keys))+1)
		for _, k := range keys {
			b = appendFloat(appendName(b, k), st.DriftOffsets[k])
		}
	}
	b = appendFloat(b, st.Rechosen)
	b = appendBaselines(b, st.Baseline, v)
	if st.Dispersion == nil {
		b = binary.AppendUvarint(b, 0)
	} else {
		d, err := st.Dispersion.MarshalBinary()
		if err != nil {
			return nil, err
		}
		b = append(binary.AppendUvarint(b, uint64(len(d))+1), d...)
	}
	b = binary.AppendUvarint(b, uint64(len(st.PriorStart)))
	return append(b, st.PriorStart...), nil
}

// finite reports whether every number of st outside its dispersion (which its JSON checks) is
// finite.
func (st *savedState) finite() bool {
	ok := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	for _, x := range st.DriftOffsets {
		if !ok(x) {
			return false
		}
	}
	for _, e := range st.Baseline {
		if !ok(e.Sum) || !ok(e.Mean) || !ok(e.Pred) || !ok(e.Count) || !ok(e.Centre) || !ok(e.Own) || !ok(e.Stale) || !ok(e.Graded) {
			return false
		}
	}
	return ok(st.Rechosen)
}

// appendBaselines writes the baseline's environment names once, then its entries, in the form
// of version v.
func appendBaselines(b []byte, base []baselineEntry, v byte) []byte {
	var envs []string
	index := map[string]uint64{}
	for _, e := range base {
		if _, ok := index[e.Env]; !ok {
			index[e.Env] = uint64(len(envs))
			envs = append(envs, e.Env)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(envs)))
	for _, env := range envs {
		b = appendName(b, env)
	}
	b = binary.AppendUvarint(b, uint64(len(base)))
	for i := range base {
		e := &base[i]
		b = binary.AppendUvarint(b, index[e.Env])
		b = appendName(b, e.Task)
		b = binary.AppendVarint(b, e.Rollouts)
		b = appendFloat(appendFloat(b, e.Sum), e.Mean)
		var flags byte
		if e.Tried {
			flags |= 1
		}
		if e.Random {
			flags |= 2
		}
		if e.Cover && v >= stateVersion {
			flags |= 4
		}
		if e.Graded != 0 && v >= stateVersion {
			flags |= 8
		}
		if e.Start && v >= stateVersion {
			flags |= 16
		}
		b = append(b, flags)
		b = appendFloat(appendFloat(appendFloat(b, omitted(e.Pred)), omitted(e.Count)), omitted(e.Centre))
		b = binary.AppendVarint(b, int64(e.Age))
		b = appendFloat(appendFloat(b, omitted(e.Own)), omitted(e.Stale))
		if v >= stateVersion {
			b = binary.AppendVarint(binary.AppendVarint(b, e.Groups), e.Degenerate)
			if e.Graded != 0 {
				b = appendFloat(b, e.Graded)
			}
		}
	}
	return b
}

// omitted is x, but +0 for −0: the fields the JSON form left out when zero read back as +0.
func omitted(x float64) float64 {
	if x == 0 {
		return 0
	}
	return x
}

func appendName(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendFloat(b []byte, x float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
}

// stateReader reads a binary state, remembering the first error.
type stateReader struct {
	b   []byte
	err error
}

func (r *stateReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s at %d bytes from its end", errState, what, len(r.b))
	}
	r.b = nil
}

func (r *stateReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("bad count")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *stateReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("bad integer")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// bytes reads n bytes (a view of the state).
func (r *stateReader) bytes(n uint64) []byte {
	if n > uint64(len(r.b)) {
		r.fail("cut short")
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *stateReader) name() string { return string(r.bytes(r.uvarint())) }

func (r *stateReader) float() float64 {
	p := r.bytes(8)
	if p == nil {
		return 0
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(p))
}

// count reads a count of items of at least least bytes each, refusing one the rest of the
// state cannot hold (so that a damaged count allocates nothing).
func (r *stateReader) count(least int) int {
	n := r.uvarint()
	if n > uint64(len(r.b)/least) {
		r.fail("count beyond the state's length")
		return 0
	}
	return int(n)
}

// decodeBinaryState decodes what encodeState wrote.
func decodeBinaryState(data []byte) (savedState, error) {
	r := &stateReader{b: data[1:]}
	var st savedState
	if n := r.uvarint(); n > 0 {
		if n-1 > uint64(len(r.b)/9) {
			r.fail("count beyond the state's length")
		} else {
			st.DriftOffsets = make(map[string]float64, n-1)
			for range n - 1 {
				k := r.name()
				if _, twice := st.DriftOffsets[k]; twice && r.err == nil {
					r.fail("an environment's offset twice")
				}
				st.DriftOffsets[k] = r.float()
			}
		}
	}
	st.Rechosen = r.float()
	st.Baseline = r.baselines(data[0])
	if n := r.uvarint(); n > 0 {
		d := r.bytes(n - 1)
		if r.err == nil {
			st.Dispersion = new(propagate.Dispersion)
			decode := st.Dispersion.UnmarshalBinary
			if data[0] < stateVersion3 {
				decode = func(d []byte) error { return json.Unmarshal(d, st.Dispersion) }
			}
			if err := decode(d); err != nil {
				return savedState{}, fmt.Errorf("%w: dispersion: %w", errState, err)
			}
		}
	}
	if p := r.bytes(r.uvarint()); len(p) > 0 {
		st.PriorStart = slices.Clone(p)
	}
	if r.err == nil && len(r.b) > 0 {
		r.fail("bytes after the end")
	}
	if r.err == nil && !st.finite() { // never encoded: the state is damaged
		r.fail("a number not finite")
	}
	if r.err != nil {
		return savedState{}, r.err
	}
	return st, nil
}

// baselines reads the environment names and the entries of a baseline of a state of version
// v; nil when it has none.
func (r *stateReader) baselines(v byte) []baselineEntry {
	envs := make([]string, r.count(1))
	for i := range envs {
		envs[i] = r.name()
	}
	n := r.count(44) // an entry is at least 44 bytes: 5 floats and 4 one-byte fields
	if n == 0 {
		return nil
	}
	out := make([]baselineEntry, n)
	for i := range out {
		e := &out[i]
		env := r.uvarint()
		if env >= uint64(len(envs)) {
			r.fail("unknown environment")
			return nil
		}
		e.Env, e.Task, e.Rollouts = envs[env], r.name(), r.varint()
		e.Sum, e.Mean = r.float(), r.float()
		flags := r.bytes(1)
		known := byte(31)
		if v < stateVersion {
			known = 3
		}
		if flags != nil && flags[0]&^known != 0 {
			r.fail("unknown flags")
			return nil
		}
		if flags != nil {
			e.Tried, e.Random, e.Cover = flags[0]&1 != 0, flags[0]&2 != 0, flags[0]&4 != 0
			e.Start = flags[0]&16 != 0
		}
		e.Pred, e.Count, e.Centre = r.float(), r.float(), r.float()
		e.Age = int(r.varint())
		if v != stateVersion1 {
			e.Own, e.Stale = r.float(), r.float()
		}
		if v >= stateVersion {
			e.Groups, e.Degenerate = r.varint(), r.varint()
			if flags != nil && flags[0]&8 != 0 {
				if e.Graded = r.float(); e.Graded == 0 && r.err == nil {
					r.fail("a graded chance of 0 flagged") // never encoded: one encoding per state
				}
			}
		}
	}
	return out
}
