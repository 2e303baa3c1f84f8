package ingest

import (
	"errors"

	"github.com/envsched/envsched/fsutil"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
)

// listed returns every task the catalogue files list now: the rows of every tracked catalogue
// file as far as it has been read (JSON lines up to the offset reached; other formats whole).
// It returns nil when some catalogue file cannot be read now (no task is retired on a partial
// view), and when no catalogue file is left at all (a catalog/ folder removed, or emptied, is no
// catalogue rather than an empty one: nothing is retired). See storage.Batch.Listed.
func (in *Ingester) listed() map[storage.TaskKey]bool {
	out := map[storage.TaskKey]bool{}
	envs := map[string]string{} // one copy of each environment's name, not one a row
	files := 0
	for _, f := range in.reg.byPath {
		if f.Kind != storage.KindCatalog || f.Gone {
			continue
		}
		files++
		if in.unreadable[f.ID] && !isJSONL(f.Path) {
			in.opts.Logger.Warn("catalogue file cannot be read as its format; no task is retired while it stays so",
				"path", f.Path)
			return nil
		}
		if keys, ok := in.wholeKeys[f.ID]; ok && !isJSONL(f.Path) {
			for _, k := range keys {
				out[k] = true
			}
			continue
		}
		// A file read whole by an earlier process (a restart does not read it again) is read
		// here, once per process: its tasks are then kept like those of a file read whole.
		var keys []storage.TaskKey
		whole := !isJSONL(f.Path)
		ok := in.catalogKeys(f, func(k storage.TaskKey) {
			if e, ok := envs[k.Env]; ok {
				k.Env = e
			} else {
				envs[k.Env] = k.Env
			}
			out[k] = true
			if whole {
				keys = append(keys, k)
			}
		})
		if !ok {
			in.opts.Logger.Warn("catalogue file cannot be read again; no task is retired this time", "path", f.Path)
			return nil
		}
		if whole {
			in.wholeKeys[f.ID] = keys
		}
	}
	if files == 0 {
		return nil
	}
	return out
}

// catalogKeys calls keep with the key of every valid row of one catalogue file, as listed()
// needs them, and reports whether the file could be read. A JSON lines file is read a line at a
// time up to the offset reached and only the keys are kept, not the rows: at a million tasks the
// rows' texts would be hundreds of megabytes held beside the task graph's build.
func (in *Ingester) catalogKeys(f *storage.FileState, keep func(storage.TaskKey)) bool {
	add := func(t record.Task) {
		if t.Env != "" && t.Task != "" && checkNames(t.Env, t.Task) == nil {
			keep(storage.TaskKey{Env: t.Env, Task: t.Task})
		}
	}
	if !isJSONL(f.Path) {
		if in.opts.ReadCatalogFile == nil {
			return true
		}
		rows, err := in.opts.ReadCatalogFile(in.abs(f.Path))
		var bad *record.BadLineError
		if unreadableFile(err) {
			in.unreadable[f.ID] = true
			return false
		}
		if err != nil && !errors.As(err, &bad) {
			return false
		}
		for _, t := range rows {
			add(t)
		}
		return true
	}
	file, err := fsutil.OpenRegular(in.abs(f.Path))
	if err != nil {
		return false
	}
	defer file.Close()
	if isBolt(file) || compressedKind(file) != "" {
		return true // quarantined whole (run.bolt, run.compressed): it lists no task
	}
	lr := newLineReader(&fileSource{f: file, limit: f.Offset}, 0, in.opts.maxLine, 1<<16)
	for lr.Offset() < f.Offset {
		line, _, kind, err := lr.next()
		if err != nil {
			break // end of file: what was read is all there is
		}
		if kind == lineTooLong || record.IsBlank(line) {
			continue
		}
		if t, err := record.ParseTask(line); err == nil {
			add(t)
		}
	}
	return true
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
