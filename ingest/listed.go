package ingest

import (
	"errors"
	"slices"
	"strings"

	"github.com/envsched/envsched/fsutil"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
)

// listed returns every task the catalogue files list now (storage.Batch.Listed), and what each
// file read well lists (Batch.Lists): the rows of every tracked catalogue file as far as it has
// been read (JSON lines up to the offset reached; other formats whole). held are the IDs of the files that cannot be read as their format now or list no task (only
// bad rows, none, or empty), and of the files they replaced at their path: each holds back the tasks it listed when it was last read (storage.Batch.Held)
// and the other files' tasks retire as usual. Such a file was taken for one that lists nothing,
// so a mistake (a file of garbage, one the trainer wrote in a wrong format, or one emptied to be
// rewritten in place) retired every task it had listed; a file's tasks are retired by deleting it
// or by rows that leave them out. A file that cannot be read now (permission denied) holds its
// tasks back the same way; it held back every file's. listed returns nil when no catalogue file
// is left at all (a catalog/ folder removed, or emptied, is no catalogue rather than an empty
// one: nothing is retired).
func (in *Ingester) listed() (out map[storage.TaskKey]bool, lists map[uint64]*storage.FileList, held []uint64) {
	in.listedOnce = true
	out, lists = map[storage.TaskKey]bool{}, map[uint64]*storage.FileList{}
	envs := map[string]string{} // one copy of each environment's name, not one a row
	var files []*storage.FileState
	for _, f := range in.reg.byPath {
		if f.Kind == storage.KindCatalog && !f.Gone {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil, nil, nil
	}
	heldNow := map[uint64]string{}
	for _, f := range files {
		whole := !isJSONL(f.Path)
		if whole && in.opts.ReadCatalogFile == nil {
			continue // not read at all (Options.ReadCatalogFile)
		}
		list := &storage.FileList{}
		var keys []storage.TaskKey // the tasks of a file read whole, kept (wholeKeys)
		add := func(k storage.TaskKey) {
			if e, ok := envs[k.Env]; ok {
				k.Env = e
			} else {
				envs[k.Env] = k.Env
			}
			out[k] = true
			list.Add(k)
			if whole {
				keys = append(keys, k)
			}
		}
		var why string
		switch kept, ok := in.wholeKeys[f.ID]; {
		case whole && in.unreadable[f.ID]:
			why = "cannot be read as its format"
		case whole && ok:
			for _, k := range kept {
				out[k] = true
				list.Add(k)
			}
		default:
			// A file read whole by an earlier process (a restart does not read it again) is read
			// here, once per process: its tasks are then kept like those of a file read whole.
			bad, ok := in.catalogKeys(f, add, nil)
			switch {
			case !ok && in.unreadable[f.ID]:
				why = "cannot be read as its format"
			case !ok: // permission denied, an I/O error: its tasks are held, as those of a broken file
				why = "cannot be read now"
			case bad > 0 && list.Len() == 0:
				why = "has bad rows and no good one"
			}
			if whole && ok {
				in.wholeKeys[f.ID] = keys
			}
		}
		if note := in.whole[f.ID]; why == "" && list.Len() == 0 && !(whole && note.stray) {
			why = "lists no task (it is empty, or holds no whole line yet)"
			if whole {
				why = "lists no task"
				if note.bad {
					why = "has bad rows and no good one"
				}
			}
		}
		if why != "" {
			held = append(held, in.sameFile(f)...)
			heldNow[f.ID] = why
		} else {
			lists[f.ID] = list
		}
	}
	in.logHeld(heldNow)
	return out, lists, held
}

// sameFile returns the ID of f and of the files gone that were at its path: a file replaced by
// rename (a new identity, a new ID) holds back the tasks its predecessor listed.
func (in *Ingester) sameFile(f *storage.FileState) []uint64 {
	ids := []uint64{f.ID}
	for id, g := range in.reg.byID {
		if g.Gone && g.Kind == storage.KindCatalog && g.Path == f.Path {
			ids = append(ids, id)
		}
	}
	return ids
}

// logHeld says once which catalogue files hold their tasks back (listed), and once when one no
// longer does.
func (in *Ingester) logHeld(now map[uint64]string) {
	for id, why := range now {
		if in.holding[id] == why {
			continue
		}
		in.opts.Logger.Warn("catalogue file "+why+"; the tasks it listed are not retired while it stays so (delete the file to retire them)",
			"path", in.reg.byID[id].Path)
		in.holding[id] = why
	}
	for id := range in.holding {
		if _, ok := now[id]; !ok {
			if f := in.reg.byID[id]; f != nil && !f.Gone {
				in.opts.Logger.Info("catalogue file lists tasks again: its tasks are no longer held back", "path", f.Path)
			}
			delete(in.holding, id)
		}
	}
}

// catalogKeys calls keep with the key of every valid row of one catalogue file, as listed()
// needs them, and reports how many rows were bad and whether the file could be read. A JSON
// lines file is read a line at a time up to the offset reached and only the keys are kept, not
// the rows: at a million tasks the rows' texts would be hundreds of megabytes held beside the
// task graph's build.
//
// row, when not nil, is given every valid row of a JSON lines file too.
func (in *Ingester) catalogKeys(f *storage.FileState, keep func(storage.TaskKey), row func(record.Task)) (bad int, ok bool) {
	add := func(t record.Task) {
		if t.Env != "" && t.Task != "" && checkNames(t.Env, t.Task) == nil {
			keep(storage.TaskKey{Env: t.Env, Task: t.Task})
		} else {
			bad++
		}
	}
	if !isJSONL(f.Path) {
		if in.opts.ReadCatalogFile == nil {
			return 0, true
		}
		rows, err := in.opts.ReadCatalogFile(in.abs(f.Path))
		var badErr *record.BadLineError
		if unreadableFile(err) {
			in.unreadable[f.ID] = true
			return 0, false
		}
		if err != nil && !errors.As(err, &badErr) {
			return 0, false
		}
		in.noteWhole(f.ID, err)
		for _, t := range rows {
			add(t)
		}
		return bad, true
	}
	file, err := fsutil.OpenRegular(in.abs(f.Path))
	if err != nil {
		return 0, false
	}
	defer file.Close()
	if isBolt(file) || compressedKind(file) != "" {
		return 1, true // quarantined whole (run.bolt, run.compressed): it lists no task
	}
	lr := newLineReader(&fileSource{f: file, limit: f.Offset}, 0, in.opts.maxLine, 1<<16)
	lr.whole = wholeRow // as run.readLines reads a catalogue file
	for lr.Offset() < f.Offset {
		line, _, kind, err := lr.next()
		if err != nil {
			break // end of file: what was read is all there is
		}
		if kind == lineTooLong {
			bad++
			continue
		}
		torn, line, _ := afterZeros(line) // as run.line reads it
		if torn != nil {
			bad++
		}
		if record.IsBlank(line) {
			continue
		}
		if t, err := record.ParseTask(line); err == nil {
			add(t)
			if row != nil && t.Env != "" && t.Task != "" && checkNames(t.Env, t.Task) == nil {
				row(t)
			}
		} else {
			bad++
		}
	}
	return bad, true
}

// wholeNote is what listed() needs to know of the last read of a file read whole besides its
// tasks: whether it is a stray file of another name (notes.txt: no catalogue, it holds nothing
// back) and whether it had bad rows.
type wholeNote struct{ stray, bad bool }

// noteWhole notes err, from Options.ReadCatalogFile on the file id (nil, some bad rows, or a
// stray file), for listed().
func (in *Ingester) noteWhole(id uint64, err error) {
	var u interface{ Unreadable() bool }
	stray := errors.As(err, &u) && !u.Unreadable()
	in.whole[id] = wholeNote{stray: stray, bad: err != nil && !stray}
}

// unreadableFile reports whether err, from Options.ReadCatalogFile, says the file could not be
// read as its format at all (an error whose Unreadable method says so), as opposed to some bad
// rows or a stray file of another name. Such a file was taken for one that lists no task, so
// every task it had listed was retired (a parquet catalogue replaced by a broken one, or one an
// earlier build read and this one refuses), though PROTOCOL.md says it retires nothing.
func unreadableFile(err error) bool {
	var u interface{ Unreadable() bool }
	return errors.As(err, &u) && u.Unreadable()
}

// rowsOf returns the last row of each task of want in the JSON lines catalogue files not in
// skip, read in the order of their paths (restore).
func (in *Ingester) rowsOf(want map[storage.TaskKey]bool, skip map[uint64]bool) map[storage.TaskKey]record.Task {
	var files []*storage.FileState
	for _, f := range in.reg.byPath {
		if f.Kind == storage.KindCatalog && !f.Gone && !skip[f.ID] && isJSONL(f.Path) {
			files = append(files, f)
		}
	}
	slices.SortFunc(files, func(a, b *storage.FileState) int { return strings.Compare(a.Path, b.Path) })
	rows := map[storage.TaskKey]record.Task{}
	for _, f := range files {
		in.catalogKeys(f, func(storage.TaskKey) {}, func(t record.Task) {
			if k := (storage.TaskKey{Env: t.Env, Task: t.Task}); want[k] {
				rows[k] = t
			}
		})
	}
	return rows
}
