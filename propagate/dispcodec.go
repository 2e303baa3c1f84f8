package propagate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// A Dispersion is stored with every answer. Its binary form holds the very numbers its JSON
// does (the log-likelihoods as float32, every other number as its float64 bits) and decodes
// to what its JSON decodes to, without the JSON's reflection and base64 (about a millisecond a
// request at 100k tasks):
//
//	dispersionVersion
//	environments: uvarint n+1 (0: none), n × (name, likelihood), names increasing
//	global, re-chosen, random: likelihood each
//	re-chosen factor: float64
//	new, re-chosen, random signals: byte 0 (none) or 1, then float64 sum, n
//	trend: byte 0 (none) or 1, then its beta, info and n as float64s
//	cover, exploit signals: as the signals above (not in version 1)
//	stuck map: as the trend, without its flag byte (only in version 3)
//	version 4: the stuck map as the trend, with its flag byte; then the never-tried factor:
//	float64, and its pending groups: uvarint count, count × (float64 mean, float64 count,
//	uvarint n, uvarint k)
//	version 5: version 4's, then the graded maps: never tried, re-chosen, random slot, each
//	byte 0 (none) or 1 and the trend
//	version 6: version 5's, then the random-slot factor: float64, and its window of groups
//	as pending groups are written
//	version 7: version 6's, then the never-tried offset: float64
//	version 8: version 7's, then a byte: bit i set when the never-tried factor's pending
//	group i was answered with the start (MatchGroup.Start; there are at most 7)
//	version 9: version 7's, then that byte (which may be 0), then the extreme map: byte 0
//	(none) or 1 and the trend
//
// where a likelihood is byte 0 (none) or 1, uvarint count, count × float32, float64 n; a name
// a uvarint length and its bytes; numbers little-endian.

// dispersionVersion is the first byte of a Dispersion's binary form. Version 1 had no cover
// and exploit signals; it is still read, without them. Version 3 adds the stuck map
// (Params.DispersionStuck) at the end, and is written only when there is one: a Dispersion
// without it is written as version 2, the very bytes of the build before, so that a
// database whose scheduler does not measure it stores what it stored. Version 4 adds the
// never-tried factor (Params.NewMatch) and writes the stuck map behind a flag byte; it too is
// written only when there is a factor, so that a state without one keeps its bytes. Version 5
// adds the graded calibration's maps (Params.GradedCal) after version 4's fields and is
// likewise written only when there are some: a database of 0/1 rewards never measures one.
// Version 6 adds the random-slot factor and its window (Params.RandomMatch) after version
// 5's fields, written only when there are some. Version 7 adds the never-tried offset
// (Params.NewShift) after version 6's fields, written only when there is one. Version 8 adds
// which of the never-tried factor's pending groups were answered with the start after
// version 7's fields, written only when one was. Version 9 adds the extreme map
// (Params.DispersionExtreme) after version 8's fields, written only when there is one.
const (
	dispersionVersion9 = 9
	dispersionVersion8 = 8
	dispersionVersion7 = 7
	dispersionVersion6 = 6
	dispersionVersion5 = 5
	dispersionVersion4 = 4
	dispersionVersion3 = 3
	dispersionVersion  = 2
	dispersionVersion1 = 1
)

// errDispersion is the error of a binary Dispersion that does not decode.
var errDispersion = errors.New("dispersion: bad binary encoding")

// MarshalBinary encodes d in its binary form. Like its JSON it refuses a number other than a
// log-likelihood that is not finite.
func (d Dispersion) MarshalBinary() ([]byte, error) {
	b := []byte{dispersionVersion}
	startBits, err := pendingStarts(d.NewPending)
	if err != nil {
		return nil, err
	}
	switch {
	case d.Extreme != nil:
		b[0] = dispersionVersion9
	case startBits != 0:
		b[0] = dispersionVersion8
	case d.NewOffset != 0:
		b[0] = dispersionVersion7
	case d.RandomFactor != 0 || len(d.RandomWindow) > 0:
		b[0] = dispersionVersion6
	case d.Graded != nil:
		b[0] = dispersionVersion5
	case d.NewFactor != 0 || len(d.NewPending) > 0 || d.LowFactor != 0 || len(d.LowPending) > 0:
		b[0] = dispersionVersion4
	case d.Stuck != nil:
		b[0] = dispersionVersion3
	}
	if len(d.Env) == 0 { // as JSON's omitempty: decodes to none
		b = binary.AppendUvarint(b, 0)
	} else {
		names := make([]string, 0, len(d.Env))
		for k := range d.Env {
			names = append(names, k)
		}
		slices.Sort(names)
		b = binary.AppendUvarint(b, uint64(len(names))+1)
		for _, k := range names {
			b = appendLikelihood(append(binary.AppendUvarint(b, uint64(len(k))), k...), d.Env[k])
		}
	}
	for _, l := range []*Likelihood{d.Global, d.Rechose, d.Random} {
		b = appendLikelihood(b, l)
	}
	b = appendF64(b, d.RechosenFactor)
	b = appendSignals(b, d.NewSignal, d.ReSignal, d.RandSignal)
	if d.Trend == nil {
		b = append(b, 0)
	} else {
		b = appendTrend(append(b, 1), d.Trend)
	}
	b = appendSignals(b, d.CoverSignal, d.ExploitSignal)
	v4 := b[0] >= dispersionVersion4 // version 4's fields, in version 5 too
	switch {
	case v4:
		b = appendTrendFlag(b, d.Stuck)
	case d.Stuck != nil:
		b = appendTrend(b, d.Stuck)
	}
	if v4 {
		b = appendPending(appendF64(b, d.NewFactor), d.NewPending)
		b = appendPending(appendF64(b, d.LowFactor), d.LowPending)
	}
	if b[0] >= dispersionVersion5 { // version 5's fields, in version 6 too
		var gc GradedCal
		if d.Graded != nil {
			gc = *d.Graded
		}
		for _, tr := range []*Trend{gc.Untried, gc.Rechosen, gc.Random} {
			b = appendTrendFlag(b, tr)
		}
	}
	if b[0] >= dispersionVersion6 { // version 6's fields, in version 7 too
		b = appendPending(appendF64(b, d.RandomFactor), d.RandomWindow)
	}
	if b[0] >= dispersionVersion7 { // version 7's field, in version 8 too
		b = appendF64(b, d.NewOffset)
	}
	if b[0] >= dispersionVersion8 { // version 8's field, in version 9 too
		b = append(b, startBits)
	}
	if b[0] == dispersionVersion9 {
		b = appendTrendFlag(b, d.Extreme)
	}
	if !d.finite() {
		return nil, fmt.Errorf("dispersion: a number is not finite")
	}
	return b, nil
}

// finite reports whether every number of d but the log-likelihoods is finite.
func (d Dispersion) finite() bool {
	xs := []float64{d.RechosenFactor, d.NewFactor, d.LowFactor, d.RandomFactor, d.NewOffset}
	for _, g := range slices.Concat(d.NewPending, d.LowPending, d.RandomWindow) {
		xs = append(xs, g.Mean, g.Count)
	}
	for _, l := range d.Env {
		if l != nil {
			xs = append(xs, l.N)
		}
	}
	for _, l := range []*Likelihood{d.Global, d.Rechose, d.Random} {
		if l != nil {
			xs = append(xs, l.N)
		}
	}
	for _, s := range []*Signal{d.NewSignal, d.ReSignal, d.RandSignal, d.CoverSignal, d.ExploitSignal} {
		if s != nil {
			xs = append(xs, s.Sum, s.N)
		}
	}
	trends := []*Trend{d.Trend, d.Stuck, d.Extreme}
	if d.Graded != nil {
		trends = append(trends, d.Graded.Untried, d.Graded.Rechosen, d.Graded.Random)
	}
	for _, tr := range trends {
		if tr != nil {
			xs = append(append(append(xs, tr.Beta[:]...), tr.Info[:]...), tr.N)
		}
	}
	for _, x := range xs {
		if !finite(x) {
			return false
		}
	}
	return true
}

// pendingStarts is the byte whose bit i is set when pending group i was answered with the
// start; pending groups are at most minFactorGroups−1 (validPending), so a byte holds them.
func pendingStarts(pending []MatchGroup) (byte, error) {
	var bits byte
	for i, g := range pending {
		if !g.Start {
			continue
		}
		if i >= 8 {
			return 0, fmt.Errorf("dispersion: %d pending groups, at most %d", len(pending), minFactorGroups-1)
		}
		bits |= 1 << i
	}
	return bits, nil
}

// appendPending appends pending groups: their count, then each one's mean and count as
// float64s, its size and successes as uvarints.
func appendPending(b []byte, pending []MatchGroup) []byte {
	b = binary.AppendUvarint(b, uint64(len(pending)))
	for _, g := range pending {
		b = appendF64(appendF64(b, g.Mean), g.Count)
		b = binary.AppendUvarint(binary.AppendUvarint(b, uint64(g.N)), uint64(g.K))
	}
	return b
}

// pending reads pending groups as appendPending wrote them.
func (d *wsDecoder) pending() []MatchGroup {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.bad = true
		return nil
	}
	var out []MatchGroup
	for range n {
		g := MatchGroup{Mean: d.float64(), Count: d.float64()}
		g.N, g.K = int64(min(d.uvarint(), 1<<20)), int64(min(d.uvarint(), 1<<20))
		out = append(out, g)
	}
	return out
}

// appendSignals appends each signal as byte 0 (none) or 1, then its sum and n.
func appendSignals(b []byte, signals ...*Signal) []byte {
	for _, s := range signals {
		if s == nil {
			b = append(b, 0)
		} else {
			b = appendF64(appendF64(append(b, 1), s.Sum), s.N)
		}
	}
	return b
}

// appendTrend appends a trend's beta, info and n as float64s.
func appendTrend(b []byte, tr *Trend) []byte {
	for _, x := range tr.Beta {
		b = appendF64(b, x)
	}
	for _, x := range tr.Info {
		b = appendF64(b, x)
	}
	return appendF64(b, tr.N)
}

// appendTrendFlag appends byte 0 for no trend, else 1 and the trend as appendTrend does.
func appendTrendFlag(b []byte, tr *Trend) []byte {
	if tr == nil {
		return append(b, 0)
	}
	return appendTrend(append(b, 1), tr)
}

// trendFlag reads a trend as appendTrendFlag wrote it.
func (d *wsDecoder) trendFlag() *Trend {
	if !d.flag() {
		return nil
	}
	return d.trend()
}

// trend reads a trend as appendTrend wrote it.
func (d *wsDecoder) trend() *Trend {
	tr := new(Trend)
	for j := range tr.Beta {
		tr.Beta[j] = d.float64()
	}
	for j := range tr.Info {
		tr.Info[j] = d.float64()
	}
	tr.N = d.float64()
	return tr
}

func appendF64(b []byte, x float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
}

func appendLikelihood(b []byte, l *Likelihood) []byte {
	if l == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(append(b, 1), uint64(len(l.LL)))
	for _, x := range l.LL {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(x)))
	}
	return appendF64(b, l.N)
}

// UnmarshalBinary decodes what MarshalBinary encoded into d (what d held is dropped).
func (d *Dispersion) UnmarshalBinary(data []byte) error {
	r := wsDecoder{b: data}
	v := r.byte()
	if v != dispersionVersion9 && v != dispersionVersion8 && v != dispersionVersion7 && v != dispersionVersion6 && v != dispersionVersion5 && v != dispersionVersion4 && v != dispersionVersion3 && v != dispersionVersion && v != dispersionVersion1 {
		return errDispersion
	}
	var out Dispersion
	if n := r.uvarint(); n > 0 {
		if n-1 > uint64(len(r.b)) {
			return errDispersion
		}
		out.Env = make(map[string]*Likelihood, n-1)
		for range n - 1 {
			k := r.str()
			if _, twice := out.Env[k]; twice {
				return errDispersion
			}
			out.Env[k] = r.likelihood()
		}
	}
	out.Global, out.Rechose, out.Random = r.likelihood(), r.likelihood(), r.likelihood()
	out.RechosenFactor = r.float64()
	r.signals(&out.NewSignal, &out.ReSignal, &out.RandSignal)
	if r.flag() {
		out.Trend = r.trend()
	}
	if v != dispersionVersion1 {
		r.signals(&out.CoverSignal, &out.ExploitSignal)
	}
	v4 := v >= dispersionVersion4 && v <= dispersionVersion9 // version 4's fields, in versions 5 to 9 too
	if v == dispersionVersion3 || v4 && r.flag() {
		out.Stuck = r.trend()
	}
	if v4 {
		out.NewFactor, out.NewPending = r.float64(), r.pending()
		out.LowFactor, out.LowPending = r.float64(), r.pending()
	}
	if v >= dispersionVersion5 && v <= dispersionVersion9 {
		out.Graded = &GradedCal{Untried: r.trendFlag(), Rechosen: r.trendFlag(), Random: r.trendFlag()}
		if *out.Graded == (GradedCal{}) {
			out.Graded = nil
		}
	}
	if v >= dispersionVersion6 && v <= dispersionVersion9 {
		out.RandomFactor, out.RandomWindow = r.float64(), r.pending()
	}
	if v >= dispersionVersion7 && v <= dispersionVersion9 {
		out.NewOffset = r.float64()
	}
	if v == dispersionVersion8 || v == dispersionVersion9 {
		bits := r.byte()
		if bits == 0 && v == dispersionVersion8 || bits>>len(out.NewPending) != 0 { // none is written as version 7
			return errDispersion
		}
		for i := range out.NewPending {
			out.NewPending[i].Start = bits&(1<<i) != 0
		}
	}
	if v == dispersionVersion9 {
		if out.Extreme = r.trendFlag(); out.Extreme == nil { // none is written as an earlier version
			return errDispersion
		}
	}
	if r.bad || len(r.b) != 0 || !out.finite() {
		return errDispersion
	}
	*d = out
	return nil
}

// signals reads signals as appendSignals wrote them.
func (d *wsDecoder) signals(out ...**Signal) {
	for _, s := range out {
		if d.flag() {
			*s = &Signal{Sum: d.float64(), N: d.float64()}
		}
	}
}

// flag reads a byte that must be 0 or 1.
func (d *wsDecoder) flag() bool {
	switch d.byte() {
	case 0:
		return false
	case 1:
		return true
	}
	d.bad = true
	return false
}

func (d *wsDecoder) float64() float64 {
	if len(d.b) < 8 {
		d.bad = true
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

// likelihood reads one likelihood (nil for none). Its log-likelihoods are never nil, as its
// JSON decodes them.
func (d *wsDecoder) likelihood() *Likelihood {
	if !d.flag() {
		return nil
	}
	n := d.uvarint()
	if n > uint64(len(d.b)/4) {
		d.bad = true
		return nil
	}
	l := &Likelihood{LL: make([]float64, n)}
	for j := range l.LL {
		l.LL[j] = float64(d.float32())
	}
	l.N = d.float64()
	return l
}
