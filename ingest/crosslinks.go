package ingest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/envsched/envsched/fsutil"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
)

// crossLinkProbe is how much of a file linkedAcross reads to find its first complete line.
const crossLinkProbe = 1 << 20

// linkedAcross settles which kind a file is when this pass finds it, untracked, with names in
// both catalog/ and rollouts/ (hard links): by its first complete line, a rollout (a finite
// reward) making it a rollout file, anything else a catalogue file. The candidates of the
// other kind are dropped (and a name of the right kind this pass was not told of is added),
// so that the file is tracked under the right name first and keeps it (registry.linkedName). A
// file with no complete line yet is left for a later pass. Every other candidate is returned
// as it is, in its order.
//
// Taken in walk order, such a file was tracked as a catalogue file (catalog/ is walked first;
// a pass hinted with its catalog/ name alone did the same): a rollout file linked into
// catalog/ before envsched first saw it was read as catalogue rows, and none of its rollouts
// ever counted, without a word. Only an untracked file with more than one link is looked at;
// the other folder is listed for it once per pass (catalog/ is flat; rollouts/ is walked only
// for such a file found in catalog/).
func (r *run) linkedAcross(cands []candidate) []candidate {
	type names struct{ cat, roll []int }
	var byID map[ident]*names
	var order []ident
	add := func(i int, c candidate, id ident) {
		if byID == nil {
			byID = map[ident]*names{}
		}
		n := byID[id]
		if n == nil {
			n = &names{}
			byID[id] = n
			order = append(order, id)
		}
		if c.kind == storage.KindCatalog {
			n.cat = append(n.cat, i)
		} else {
			n.roll = append(n.roll, i)
		}
	}
	for i, c := range cands {
		if id, ok := r.multiLinked(c); ok {
			add(i, c, id)
		}
	}
	if byID == nil {
		return cands
	}
	var others map[storage.FileKind]map[ident][]candidate
	for _, id := range order {
		n := byID[id]
		if r.in.reg.byIdent[id] != nil || r.in.reg.gone[id] != nil {
			continue // tracked already: its first name stands
		}
		for _, want := range []storage.FileKind{storage.KindCatalog, storage.KindRollouts} {
			if have := map[storage.FileKind][]int{storage.KindCatalog: n.cat, storage.KindRollouts: n.roll}[want]; len(have) > 0 {
				continue
			}
			if others == nil {
				others = map[storage.FileKind]map[ident][]candidate{}
			}
			if others[want] == nil {
				others[want] = r.multiLinkedIn(want)
			}
			for _, c := range others[want][id] {
				cands = append(cands, c)
				add(len(cands)-1, c, id)
			}
		}
	}
	drop := map[int]bool{}
	for _, id := range order {
		n := byID[id]
		if t := r.in.reg.byIdent[id]; t != nil && t.Kind == storage.KindCatalog && len(n.roll) > 0 {
			// A catalogue file that has got a rollouts/ name since it was first read (a rollout
			// file written into catalog/ by mistake, then linked into rollouts/ with its
			// catalog/ name kept): its first complete line decides, as for a file found in both
			// folders at first sight. Kept a catalogue file under its first name, none of its
			// rollouts ever counted, without a word (hostile15's leftover). Only the names this
			// pass was given are looked at: a full scan lists both folders, and the link's
			// creation hints its rollouts/ name.
			roll := cands[n.roll[0]]
			if kind, ok := r.firstLineKind(roll.rel); ok && kind == storage.KindRollouts {
				for _, i := range n.cat {
					drop[i] = true
				}
				cands[n.roll[0]].ownName = true
				r.in.opts.Logger.Warn("catalogue file now also named in rollouts/ (hard links): its first line is a "+
					"rollout, so it is read as a rollout file under its rollouts/ name from its start, and its "+
					"rows are no longer listed as tasks; its catalog/ name is not read (remove it)",
					"path", roll.rel, "also", t.Path)
			}
			continue
		}
		if len(n.cat) == 0 || len(n.roll) == 0 || r.in.reg.byIdent[id] != nil || r.in.reg.gone[id] != nil {
			continue
		}
		cat, roll := cands[n.cat[0]].rel, cands[n.roll[0]].rel
		kind, ok := r.firstLineKind(roll)
		switch {
		case !ok: // no complete line yet: decided once there is one
			for _, i := range append(n.cat, n.roll...) {
				drop[i] = true
			}
		case kind == storage.KindRollouts:
			for _, i := range n.cat {
				drop[i] = true
			}
			r.in.opts.Logger.Warn("file named in both catalog/ and rollouts/ (hard links): its first line is a "+
				"rollout, so it is read as a rollout file under its rollouts/ name; its catalog/ name is not read "+
				"(remove it)", "path", roll, "also", cat)
		default:
			for _, i := range n.roll {
				drop[i] = true
			}
			r.in.opts.Logger.Warn("file named in both catalog/ and rollouts/ (hard links): its first line is no "+
				"rollout, so it is read as a catalogue file under its catalog/ name; its rollouts/ name is not read "+
				"(remove it)", "path", cat, "also", roll)
		}
	}
	out := make([]candidate, 0, len(cands))
	for i, c := range cands {
		if !drop[i] {
			out = append(out, c)
		}
	}
	return out
}

// multiLinked returns the identity of candidate c when it is a regular file with more than
// one link.
func (r *run) multiLinked(c candidate) (ident, bool) {
	fi := c.listed
	if fi == nil {
		var err error
		if fi, err = os.Lstat(r.in.abs(c.rel)); err != nil {
			return ident{}, false
		}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Nlink < 2 || !fi.Mode().IsRegular() {
		return ident{}, false
	}
	return ident{dev: uint64(st.Dev), ino: st.Ino}, true //nolint:unconvert // Dev is int32 on some systems
}

// multiLinkedIn lists the files of kind's folder with more than one link, by identity, as
// candidates. Links to folders are not entered, unreadable folders are passed over.
func (r *run) multiLinkedIn(kind storage.FileKind) map[ident][]candidate {
	root := RolloutsDir
	if kind == storage.KindCatalog {
		root = CatalogDir
	}
	out := map[ident][]candidate{}
	_ = filepath.WalkDir(filepath.Join(r.in.dir, root), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel := r.in.relOf(p)
		if k, ok := classify(rel); !ok || k != kind {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		c := candidate{rel: rel, kind: kind, listed: fi}
		if id, ok := r.multiLinked(c); ok {
			out[id] = append(out[id], c)
		}
		return nil
	})
	return out
}

// firstLineKind reads the first complete line of the file at rel that is not blank:
// KindRollouts when it reads as a rollout (record.RolloutLike: a catalogue row with a `score`
// is none), KindCatalog otherwise (a line longer than the
// longest line read is no rollout); false when the file has no complete line yet or cannot be
// read (the pass that opens it says why). It reads a MiB at a time, as far as that line goes.
func (r *run) firstLineKind(rel string) (storage.FileKind, bool) {
	f, err := fsutil.OpenRegular(r.in.abs(rel))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var line []byte
	chunk := make([]byte, crossLinkProbe)
	for off := int64(0); ; {
		n, err := f.ReadAt(chunk, off)
		off += int64(n)
		data := chunk[:n]
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				line = append(line, data...)
				break
			}
			line = append(line, data[:i]...)
			data = data[i+1:]
			if record.IsBlank(line) {
				line = line[:0]
				continue
			}
			if record.RolloutLike(line) {
				return storage.KindRollouts, true
			}
			return storage.KindCatalog, true
		}
		if int64(len(line)) > int64(r.in.opts.maxLine) {
			return storage.KindCatalog, true
		}
		if err != nil || n == 0 {
			return 0, false
		}
	}
}
