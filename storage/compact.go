package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/envsched/envsched/fsutil"
)

// CompactInPlace replaces the database's file with a compacted copy, holding the lock
// throughout: Compact writes the copy beside the file under a temporary name (fsutil.TempName),
// the copy is checked to hold the same counters and per-environment statistics, and
// fsutil.Replace renames it over the file and fsyncs the folder. A crash at any moment leaves
// the old file or the new one; a failed check leaves the database unchanged. It returns the new
// file's size.
//
// db itself goes on reading the old file, which is no longer in the folder: close it and open
// the path again to use the compacted one. Anything that opens the path after the rename gets the
// new file; a process already waiting for the lock would get the old one, so callers keep db
// open past DefaultTimeout before closing it (as `envsched compact` does).
//
// A path that is a symbolic link is resolved first: the file it names is replaced, beside
// itself, and the link stays. (Renamed over the link, the copy became a second database in
// the link's folder, and the file the link named stayed, uncompacted.)
func (db *DB) CompactInPlace() (int64, error) { return db.CompactInPlaceWith(CompactHooks{}) }

// CompactHooks tell the caller of CompactInPlaceWith where the copy is written, so that an
// interrupt can remove it (envsched compact stopped by SIGINT or SIGTERM left the partial copy
// beside the database for good, as large as what was written).
type CompactHooks struct {
	Temp     func(tmp string) // the copy's path, before anything is written to it
	Renaming func()           // the copy is whole and checked: it is renamed over the database next
}

// CompactInPlaceWith is CompactInPlace with hooks (either may be nil).
func (db *DB) CompactInPlaceWith(h CompactHooks) (int64, error) {
	path, err := filepath.EvalSymlinks(db.Path())
	if err != nil {
		return 0, fmt.Errorf("compact %s: %w", db.Path(), err)
	}
	before, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("compact %s: %w", db.Path(), err)
	}
	var size int64
	err = fsutil.Replace(path, func(tmp string) error {
		if h.Temp != nil {
			h.Temp(tmp)
		}
		if err := db.Compact(tmp); err != nil {
			return err
		}
		if err := keepOwnerAndMode(tmp, before); err != nil {
			return err
		}
		if err := db.sameCounts(tmp); err != nil {
			return err
		}
		fi, err := os.Stat(tmp)
		if err != nil {
			return err
		}
		size = fi.Size()
		if h.Renaming != nil {
			h.Renaming()
		}
		return nil
	}, fsutil.Hooks{})
	return size, err
}

// sameCounts opens the copy and compares its counters and environments with the original's.
func (db *DB) sameCounts(copyPath string) error {
	cp, err := Open(copyPath, Options{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("open compacted copy: %w", err)
	}
	defer cp.Close()
	c1, err1 := db.Counters()
	c2, err2 := cp.Counters()
	e1, err3 := db.Envs()
	e2, err4 := cp.Envs()
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return fmt.Errorf("compare compacted copy: %w", err)
	}
	if c1 != c2 || len(e1) != len(e2) {
		return fmt.Errorf("compacted copy differs (counters %+v, want %+v; %d envs, want %d); the database is unchanged",
			c2, c1, len(e2), len(e1))
	}
	for name, e := range e1 {
		if e2[name] != e {
			return fmt.Errorf("compacted copy differs in env %s; the database is unchanged", name)
		}
	}
	return nil
}

// keepOwnerAndMode gives the compacted copy at tmp the permission bits, owner and group of the
// file it replaces (fi): the copy was made 0600 by this process's user, so a database made
// group-readable for a monitoring user (`chmod 640`, `chgrp`) was no longer readable by it once
// compacted. An owner or group this process may not give is left as it is.
func keepOwnerAndMode(tmp string, fi os.FileInfo) error {
	if err := os.Chmod(tmp, fi.Mode().Perm()); err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if err := os.Chown(tmp, int(st.Uid), int(st.Gid)); err != nil && !errors.Is(err, fs.ErrPermission) {
			return err
		}
	}
	return nil
}
