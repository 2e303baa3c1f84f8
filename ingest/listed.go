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
	files := 0
	for _, f := range in.reg.byPath {
		if f.Kind != storage.KindCatalog || f.Gone {
			continue
		}
		files++
		if keys, ok := in.wholeKeys[f.ID]; ok && !isJSONL(f.Path) {
			for _, k := range keys {
				out[k] = true
			}
			continue
		}
		// A file read whole by an earlier process (a restart does not read it again) is read
		// here, once per process: its tasks are then kept like those of a file read whole.
		rows, ok := in.catalogRows(f)
		if !ok {
			in.opts.Logger.Warn("catalogue file cannot be read again; no task is retired this time", "path", f.Path)
			return nil
		}
		var keys []storage.TaskKey
		for _, t := range rows {
			if t.Env != "" && t.Task != "" && checkNames(t.Env, t.Task) == nil {
				out[storage.TaskKey{Env: t.Env, Task: t.Task}] = true
				keys = append(keys, storage.TaskKey{Env: t.Env, Task: t.Task})
			}
		}
		if !isJSONL(f.Path) {
			in.wholeKeys[f.ID] = keys
		}
	}
	if files == 0 {
		return nil
	}
	return out
}

// catalogRows reads the rows of one catalogue file as listed() needs them.
func (in *Ingester) catalogRows(f *storage.FileState) ([]record.Task, bool) {
	if !isJSONL(f.Path) {
		if in.opts.ReadCatalogFile == nil {
			return nil, true
		}
		rows, err := in.opts.ReadCatalogFile(in.abs(f.Path))
		var bad *record.BadLineError
		return rows, err == nil || errors.As(err, &bad)
	}
	file, err := fsutil.OpenRegular(in.abs(f.Path))
	if err != nil {
		return nil, false
	}
	defer file.Close()
	lr := newLineReader(file, 0, in.opts.maxLine, 1<<16)
	var rows []record.Task
	for lr.Offset() < f.Offset {
		line, _, kind, err := lr.next()
		if err != nil {
			break // end of file: what was read is all there is
		}
		if kind == lineTooLong || record.IsBlank(line) {
			continue
		}
		if t, err := record.ParseTask(line); err == nil {
			rows = append(rows, t)
		}
	}
	return rows, true
}
