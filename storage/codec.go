package storage

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/stats"
)

// The stored values are small fixed or length-prefixed binary layouts: decoding 100k task
// statistics at start must take milliseconds, not seconds.

type enc []byte

func (e enc) u8(v uint8) enc     { return append(e, v) }
func (e enc) u64(v uint64) enc   { return binary.BigEndian.AppendUint64(e, v) }
func (e enc) i64(v int64) enc    { return e.u64(uint64(v)) }
func (e enc) f64(v float64) enc  { return e.u64(math.Float64bits(v)) }
func (e enc) uvar(v uint64) enc  { return binary.AppendUvarint(e, v) }
func (e enc) svar(v int64) enc   { return binary.AppendVarint(e, v) }
func (e enc) bytes(b []byte) enc { return append(e.uvar(uint64(len(b))), b...) }
func (e enc) str(s string) enc   { return append(e.uvar(uint64(len(s))), s...) }

func (e enc) strs(ss []string) enc {
	e = e.uvar(uint64(len(ss)))
	for _, s := range ss {
		e = e.str(s)
	}
	return e
}

// dec reads what enc wrote; the first short read sets bad and every later read returns zero.
type dec struct {
	b   []byte
	bad bool
}

func (d *dec) take(n int) []byte {
	if d.bad || n < 0 || len(d.b) < n {
		d.bad = true
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *dec) u8() uint8 {
	if b := d.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (d *dec) u64() uint64 {
	if b := d.take(8); b != nil {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}

func (d *dec) i64() int64   { return int64(d.u64()) }
func (d *dec) f64() float64 { return math.Float64frombits(d.u64()) }

func (d *dec) uvar() uint64 {
	v, n := binary.Uvarint(d.b)
	if d.bad || n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) svar() int64 {
	v, n := binary.Varint(d.b)
	if d.bad || n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

// bytes returns a copy: bbolt's memory is only valid inside the transaction.
func (d *dec) bytes() []byte {
	n := d.uvar()
	if n > uint64(len(d.b)) {
		d.bad = true
		return nil
	}
	return append([]byte(nil), d.take(int(n))...)
}

func (d *dec) str() string {
	n := d.uvar()
	if n > uint64(len(d.b)) {
		d.bad = true
		return ""
	}
	return string(d.take(int(n)))
}

func (d *dec) strs() []string {
	n := d.uvar()
	if n == 0 || n > uint64(len(d.b)) {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}

func (d *dec) err(what string) error {
	if d.bad {
		return fmt.Errorf("decode %s: %w", what, ErrCorrupt)
	}
	return nil
}

// taskRecordLen is the size of a value of the tasks bucket.
const taskRecordLen = 8 + 1 + 13*8

const flagInCatalog = 1

// taskRecord is the value of the tasks bucket: when the task was added, whether a catalogue row
// was seen, and its statistics.
type taskRecord struct {
	Seq       uint64
	InCatalog bool
	Stats     stats.Task
}

func (r taskRecord) encode(buf []byte) []byte {
	e := enc(buf[:0]).u64(r.Seq)
	var flags uint8
	if r.InCatalog {
		flags |= flagInCatalog
	}
	e = e.u8(flags)
	return encodeTaskStats(e, r.Stats)
}

func encodeTaskStats(e enc, s stats.Task) enc {
	return e.i64(s.Rollouts).f64(s.Sum).f64(s.SumSq).f64(s.A).f64(s.B).f64(s.WV).f64(s.WN).
		i64(s.Round).i64(s.Groups).i64(s.Degenerate).i64(s.LastStep).i64(s.Chosen).i64(s.LastChosen)
}

func decodeTaskRecord(b []byte) (taskRecord, error) {
	d := dec{b: b}
	r := taskRecord{Seq: d.u64(), InCatalog: d.u8()&flagInCatalog != 0}
	s := &r.Stats
	s.Rollouts, s.Sum, s.SumSq, s.A, s.B = d.i64(), d.f64(), d.f64(), d.f64(), d.f64()
	s.WV, s.WN, s.Round, s.Groups, s.Degenerate = d.f64(), d.f64(), d.i64(), d.i64(), d.i64()
	s.LastStep, s.Chosen, s.LastChosen = d.i64(), d.i64(), d.i64()
	return r, d.err("task")
}

func encodeGroup(buf []byte, g stats.Group) []byte {
	return enc(buf[:0]).i64(g.N).f64(g.Min).f64(g.Max).f64(g.Sum).f64(g.SumSq).i64(g.Round)
}

func decodeGroup(b []byte) (stats.Group, error) {
	d := dec{b: b}
	g := stats.Group{N: d.i64(), Min: d.f64(), Max: d.f64(), Sum: d.f64(), SumSq: d.f64(), Round: d.i64()}
	return g, d.err("group")
}

func encodeEnv(e stats.Env) []byte {
	return enc(nil).i64(e.Tasks).i64(e.TasksSeen).i64(e.Rollouts).f64(e.Sum).i64(e.Groups).i64(e.Degenerate)
}

func decodeEnv(b []byte) (stats.Env, error) {
	d := dec{b: b}
	e := stats.Env{Tasks: d.i64(), TasksSeen: d.i64(), Rollouts: d.i64(), Sum: d.f64(),
		Groups: d.i64(), Degenerate: d.i64()}
	return e, d.err("env")
}

// Catalogue metadata: text, tools, tags, embedding.
func encodeMeta(t record.Task) []byte {
	e := enc(nil).str(t.Text).strs(t.Tools).strs(t.Tags).uvar(uint64(len(t.Embedding)))
	for _, f := range t.Embedding {
		e = binary.LittleEndian.AppendUint32(e, math.Float32bits(f))
	}
	return e
}

func decodeMeta(b []byte, t *record.Task) error {
	d := dec{b: b}
	t.Text, t.Tools, t.Tags = d.str(), d.strs(), d.strs()
	n := d.uvar()
	if n > 0 && n <= uint64(len(d.b)/4) {
		t.Embedding = make([]float32, n)
		raw := d.take(int(n) * 4)
		for i := range t.Embedding {
			t.Embedding[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	} else if n > 0 {
		d.bad = true
	}
	return d.err("catalogue metadata")
}

const (
	rollFlagHasStep = 1
	rollFlagClipped = 2
)

// encodeRollout writes the compact stored form: flags, task seq, reward, round, file, group,
// request, rollout id. A rollout with a step has Round == Step.
func encodeRollout(buf []byte, taskSeq uint64, r *StoredRollout) []byte {
	var flags uint8
	if r.HasStep {
		flags |= rollFlagHasStep
	}
	if r.Clipped {
		flags |= rollFlagClipped
	}
	return enc(buf[:0]).u8(flags).uvar(taskSeq).f64(r.Reward).svar(r.Round).uvar(r.File).
		str(r.Group).str(r.RequestID).str(r.RolloutID)
}

// decodeRollout fills r from a stored value and returns the task seq it names; Env and Task
// are left to the caller.
func decodeRollout(b []byte, r *StoredRollout) (uint64, error) {
	d := dec{b: b}
	flags := d.u8()
	taskSeq := d.uvar()
	r.HasStep, r.Clipped = flags&rollFlagHasStep != 0, flags&rollFlagClipped != 0
	r.Reward, r.Round, r.File = d.f64(), d.svar(), d.uvar()
	r.Group, r.RequestID, r.RolloutID = d.str(), d.str(), d.str()
	r.Step = 0
	if r.HasStep {
		r.Step = r.Round
	}
	return taskSeq, d.err("rollout")
}

// groupKey is the key of a group in the groups bucket: round (order-preserving), task seq, the
// group key as read. Groups of one round sit together, so a commit of recent rollouts writes a
// few pages at the end of the bucket, not one page per task.
func groupKey(round int64, taskSeq uint64, group string) []byte {
	k := make([]byte, 16, 16+len(group))
	binary.BigEndian.PutUint64(k, uint64(round)^(1<<63))
	binary.BigEndian.PutUint64(k[8:], taskSeq)
	return append(k, group...)
}

func splitGroupKey(k []byte) (round int64, taskSeq uint64, group string, ok bool) {
	if len(k) < 16 {
		return 0, 0, "", false
	}
	return int64(binary.BigEndian.Uint64(k) ^ (1 << 63)), binary.BigEndian.Uint64(k[8:]), string(k[16:]), true
}

func encodeFile(f FileState) []byte {
	var gone uint8
	if f.Gone {
		gone = 1
	}
	return enc(nil).u64(f.ID).u8(uint8(f.Kind)).u8(gone).uvar(f.Dev).uvar(f.Ino).
		svar(f.Offset).svar(f.Generation).svar(f.Size).svar(f.ModTime).
		bytes(f.Fingerprint).str(f.Path).bytes(f.Tail).svar(f.Birth).svar(f.Quarantined).
		svar(f.Ctime).bytes(f.Digest).u8(b2u(f.InLongLine))
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

func decodeFile(b []byte) (FileState, error) {
	d := dec{b: b}
	f := FileState{ID: d.u64(), Kind: FileKind(d.u8()), Gone: d.u8() != 0, Dev: d.uvar(), Ino: d.uvar()}
	f.Offset, f.Generation, f.Size, f.ModTime = d.svar(), d.svar(), d.svar(), d.svar()
	f.Fingerprint, f.Path = d.bytes(), d.str()
	if len(d.b) > 0 { // written since Tail was added; older states have none (checked as empty)
		f.Tail, f.Birth = d.bytes(), d.svar()
	}
	if len(d.b) > 0 { // written since Quarantined was added; older states count none stored
		f.Quarantined = d.svar()
	}
	if len(d.b) > 0 { // written since Ctime and Digest were added
		f.Ctime, f.Digest = d.svar(), d.bytes()
	}
	if len(d.b) > 0 { // written since InLongLine was added
		f.InLongLine = d.u8() != 0
	}
	return f, d.err("file state")
}

func encodeQuarantine(q QuarantineEntry) []byte {
	return enc(nil).u64(q.Seq).u64(q.File).svar(q.Offset).str(q.Path).str(q.Reason).bytes(q.Head)
}

func decodeQuarantine(b []byte) (QuarantineEntry, error) {
	d := dec{b: b}
	q := QuarantineEntry{Seq: d.u64(), File: d.u64(), Offset: d.svar(), Path: d.str(), Reason: d.str()}
	q.Head = d.bytes()
	return q, d.err("quarantine entry")
}

func encodeEdges(edges []Edge) []byte {
	e := enc(nil).uvar(uint64(len(edges)))
	for _, x := range edges {
		cross := uint8(0)
		if x.Cross {
			cross = 1
		}
		e = e.str(x.Env).str(x.Task).u8(cross)
		e = binary.BigEndian.AppendUint32(e, math.Float32bits(x.Weight))
		e = binary.BigEndian.AppendUint32(e, math.Float32bits(x.Sim))
	}
	return e
}

func decodeEdges(b []byte) ([]Edge, error) {
	d := dec{b: b}
	n := d.uvar()
	if n > uint64(len(d.b)) {
		return nil, fmt.Errorf("decode edges: %w", ErrCorrupt)
	}
	out := make([]Edge, n)
	for i := range out {
		out[i] = Edge{Env: d.str(), Task: d.str(), Cross: d.u8() != 0}
		if raw := d.take(8); raw != nil {
			out[i].Weight = math.Float32frombits(binary.BigEndian.Uint32(raw))
			out[i].Sim = math.Float32frombits(binary.BigEndian.Uint32(raw[4:]))
		}
	}
	return out, d.err("edges")
}

func nodeKey(env, task string) []byte {
	k := make([]byte, 0, len(env)+1+len(task))
	return append(append(append(k, env...), 0), task...)
}

func splitNodeKey(k []byte) (env, task string, ok bool) {
	for i, c := range k {
		if c == 0 {
			return string(k[:i]), string(k[i+1:]), true
		}
	}
	return "", "", false
}

func u64key(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
