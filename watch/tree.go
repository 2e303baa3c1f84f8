package watch

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// fileState is what a poll compares: a path whose state differs between two listings changed.
type fileState struct {
	size  int64
	mtime int64 // nanoseconds
	ino   uint64
	dir   bool
}

// tree is the last listing of the roots. Only Run's goroutine (and New, before Run) use it.
type tree struct {
	files map[string]fileState
	// onSkip, when set, is told of every entry a listing could not read (permission denied, a
	// path longer than the system's limit, a missing root): the walk skips it and goes on.
	onSkip func(path string, err error)
}

func newTree() *tree { return &tree{files: map[string]fileState{}} }

// ignored reports whether a name is an unfinished write by the protocol's rule: it starts with
// a dot or ends with ".tmp".
func ignored(path string) bool {
	base := filepath.Base(path)
	return strings.HasPrefix(base, ".") || strings.HasSuffix(base, ".tmp")
}

// scan takes the first listing; onDir is called for every folder, as the walk reaches it and
// before its entries are read, so that a file created in it during the walk is either listed or
// seen by the watch.
func (t *tree) scan(roots []string, onDir func(string)) error {
	files, err := t.list(roots, onDir)
	if err != nil {
		return err
	}
	t.files = files
	return nil
}

// rescan lists the roots again and returns the paths that appeared, changed or went away.
// onDir is called for every folder, before its entries are read: not only for new ones, since a
// folder deleted and made again under the same name while events were lost looks unchanged
// (same path, often the same inode) but has lost its watch, and a folder whose watch could not
// be added (inotify's limit) gets another try.
func (t *tree) rescan(roots []string, onDir func(string)) ([]string, error) {
	files, err := t.list(roots, onDir)
	if err != nil {
		return nil, err
	}
	var changed []string
	for p, st := range files {
		if old, ok := t.files[p]; !ok || old != st {
			changed = append(changed, p)
		}
	}
	for p := range t.files {
		if _, ok := files[p]; !ok {
			changed = append(changed, p)
		}
	}
	t.files = files
	return changed, nil
}

// addDir handles a path that was just created: when it is a folder, onDir is called for it and
// every folder below, and the files below are returned (they may predate the watch). Each
// folder is watched before its entries are read: a file created after the read is seen by the
// watch, one created before it is listed (a burst into a new folder loses nothing between the
// two).
func (t *tree) addDir(path string, onDir func(string)) []string {
	fi, err := os.Lstat(path)
	if err != nil || !fi.IsDir() {
		return nil
	}
	files, err := t.list([]string{path}, onDir)
	if err != nil {
		return nil
	}
	var out []string
	for p, st := range files {
		if !st.dir {
			out = append(out, p)
		}
	}
	return out
}

// list walks the roots without following any symbolic link (a linked folder is never entered). Paths that vanish during the walk are skipped. onDir, when not nil, is called
// for every folder when the walk reaches it, before its entries are read.
func (t *tree) list(roots []string, onDir func(string)) (map[string]fileState, error) {
	files := make(map[string]fileState)
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			return t.visit(root, p, d, err, files, onDir)
		})
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

func (t *tree) visit(root, p string, d fs.DirEntry, err error, files map[string]fileState, onDir func(string)) error {
	if err != nil {
		// Nothing in a trainer's folder stops the listing: a folder it cannot read, a path too
		// long, a root removed (the daemon makes it again) are skipped and reported.
		if !errors.Is(err, fs.ErrNotExist) || p == root {
			t.skip(p, err)
		}
		return nil
	}
	if p != root && ignored(p) {
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	}
	st, ok := t.state(d)
	if ok {
		files[p] = st
		if st.dir && onDir != nil {
			onDir(p)
		}
	}
	return nil
}

// skip tells onSkip of an entry the listing could not read.
func (t *tree) skip(p string, err error) {
	if t.onSkip != nil {
		t.onSkip(p, err)
	}
}

// state returns the state of one entry; ok is false for an entry that vanished. A symbolic
// link is reported as itself (made, removed, pointed elsewhere), never as its target, and a
// linked folder is never entered: the consumer refuses links, the same way in both modes.
func (t *tree) state(d fs.DirEntry) (fileState, bool) {
	fi, err := d.Info()
	if err != nil {
		return fileState{}, false
	}
	return stateOf(fi), true
}

func stateOf(fi fs.FileInfo) fileState {
	st := fileState{size: fi.Size(), mtime: fi.ModTime().UnixNano(), dir: fi.IsDir()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = sys.Ino
	}
	if st.dir {
		st.size, st.mtime = 0, 0 // a folder's own size and time say nothing the files do not
	}
	return st
}
