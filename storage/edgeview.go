package storage

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// EdgeViews calls fn for every stored adjacency list, by node (environment, then task, byte
// order), like Edges but without copying: the node's names, the edges' Env and Task, and the
// slice itself are views into the database and into a buffer reused by the next call. The
// slice is valid only during that call of fn; the names, in a read transaction (View), as long
// as the Reader is (bbolt's values live as long as their transaction; in a commit's they may
// move), so that fn may keep them to look up later. It is the path of a process
// that reads millions of edges to look their names up, and keeps none of the strings. It
// releases the pages it has read as it goes (ReleasePages).
func (r *Reader) EdgeViews(fn func(node TaskKey, edges []Edge) error) error {
	var buf []Edge
	rl := releaser{tx: r.tx}
	return r.tx.Bucket(bucketEdges).ForEach(func(k, v []byte) error {
		rl.tick()
		env, task, ok := splitNodeKeyView(k)
		if !ok {
			return fmt.Errorf("edges key %q: %w", k, ErrCorrupt)
		}
		var err error
		if buf, err = decodeEdgeViews(v, buf[:0]); err != nil {
			return fmt.Errorf("edges of %s/%s: %w", env, task, err)
		}
		return fn(TaskKey{env, task}, buf)
	})
}

// EdgeTotal returns the number of stored edges (the sum of the lists' lengths), reading only
// each list's length, and releasing the pages it has read as it goes.
func (r *Reader) EdgeTotal() (int, error) {
	total := 0
	rl := releaser{tx: r.tx}
	err := r.tx.Bucket(bucketEdges).ForEach(func(k, v []byte) error {
		rl.tick()
		n, w := binary.Uvarint(v)
		if w <= 0 || n > uint64(len(v)) {
			return fmt.Errorf("edges of %q: %w", k, ErrCorrupt)
		}
		total += int(n)
		return nil
	})
	return total, err
}

// view is a string sharing b's bytes: valid while b is (inside the transaction that read it).
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func splitNodeKeyView(k []byte) (env, task string, ok bool) {
	for i, c := range k {
		if c == 0 {
			return view(k[:i]), view(k[i+1:]), true
		}
	}
	return "", "", false
}

// decodeEdgeViews is decodeEdges appending to out, with Env and Task views into b.
func decodeEdgeViews(b []byte, out []Edge) ([]Edge, error) {
	d := dec{b: b}
	n := d.uvar()
	if n > uint64(len(d.b)) {
		return out, fmt.Errorf("decode edges: %w", ErrCorrupt)
	}
	for range n {
		e := Edge{Env: d.strView(), Task: d.strView(), Cross: d.u8() != 0}
		if raw := d.take(8); raw != nil {
			e.Weight = math.Float32frombits(binary.BigEndian.Uint32(raw))
			e.Sim = math.Float32frombits(binary.BigEndian.Uint32(raw[4:]))
		}
		out = append(out, e)
	}
	return out, d.err("edges")
}

// strView is str without the copy.
func (d *dec) strView() string {
	n := d.uvar()
	if n > uint64(len(d.b)) {
		d.bad = true
		return ""
	}
	return view(d.take(int(n)))
}
