package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/envsched/envsched/fsutil"
)

// Nothing a trainer can do to the exchange directory stops the daemon: a folder removed while
// serving is made again, a folder that cannot be made again (a file in its place) is logged and
// tried again at every sweep, and a name envsched must write that is taken by something other
// than a plain file (status.json as a folder, batches/ID.json as a folder) is logged and left
// alone. Only envsched's own failures (the database, a full disk, a failed fsync) stop it.

// faults are the troubles with the exchange directory logged so far, by path, with the message
// last logged: each is logged once until it changes or clears. Only Run's goroutine uses it.
type faults map[string]string

// once records msg for path and reports whether it differs from what was last recorded.
func (f faults) once(path, msg string) bool {
	if f[path] == msg {
		return false
	}
	f[path] = msg
	return true
}

// repairDirs makes again the folders of the exchange directory removed while serving; when it
// made any, the watcher lists everything again (a folder made again has lost its watch). It
// reports whether DIR/batches can be published into.
func (d *Daemon) repairDirs() bool {
	made, ok := false, true
	for _, dir := range []string{d.dirs.catalog, d.dirs.rollouts, d.dirs.requests, d.dirs.batches} {
		_, err := os.Lstat(dir)
		missing := errors.Is(err, fs.ErrNotExist)
		if err := realDir(dir); err != nil {
			ok = ok && dir != d.dirs.batches
			if d.faults.once(dir, err.Error()) {
				d.log.Error("exchange folder unusable; serving goes on, and it is tried again at every sweep",
					"path", dir, "err", err)
			}
			continue
		}
		delete(d.faults, dir)
		if missing {
			made = true
			d.log.Warn("exchange folder was removed; made it again", "path", dir)
		}
	}
	if made {
		d.watcher.Relist()
	}
	return ok
}

// nearFolders are the names of DIR's folders a trainer may write for an exchange folder
// (singular, plural, the British spelling), by the folder each stands for. Compared in lower case.
var nearFolders = map[string]string{
	"rollout": "rollouts", "rollouts": "rollouts", "catalog": "catalog", "catalogs": "catalog", "catalogue": "catalog",
	"catalogues": "catalog", "request": "requests", "requests": "requests", "batch": "batches", "batches": "batches",
}

// warnStrayFolders logs once each folder of DIR named like an exchange folder but not one
// (DIR/rollout, DIR/Rollouts, DIR/catalogue): nothing in it is read, and the rollouts, catalogue
// or requests a trainer wrote there were ignored without a word.
func (d *Daemon) warnStrayFolders() {
	entries, err := os.ReadDir(d.dirs.root)
	if err != nil {
		return // said by the folders' own checks
	}
	for _, e := range entries {
		meant, ok := nearFolders[strings.ToLower(e.Name())]
		if !ok || e.Name() == meant || !e.IsDir() {
			continue
		}
		path := filepath.Join(d.dirs.root, e.Name())
		if d.faults.once(path, "stray folder") {
			d.log.Warn("folder in the exchange directory is not read: it looks meant as "+meant+"/, where envsched "+
				"reads (or writes) those files; move them there", "path", path, "meant", filepath.Join(d.dirs.root, meant))
		}
	}
}

// plainTarget reports whether name in dir is free or a plain file that envsched may replace;
// anything else (a folder, a link) is logged once and left alone.
func (d *Daemon) plainTarget(dir, name string) bool {
	path := filepath.Join(dir, name)
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode().IsRegular() {
		delete(d.faults, path)
		return true
	}
	msg := fmt.Sprintf("%s is a %s, not a plain file; envsched cannot write it: remove it", path, kindOf(fi))
	if d.faults.once(path, msg) {
		d.log.Error("cannot publish", "path", path, "err", msg)
	}
	return false
}

// tampered reports whether a failed write into the exchange directory failed because of what
// a trainer did to it in the meantime (a folder removed, or replaced by a file or the other way
// round; its permissions changed, or its filesystem made read-only) rather than a failure of
// envsched's (a full disk, an I/O error), which must stop it.
func tampered(err error) bool {
	for _, e := range []error{syscall.ENOENT, syscall.ENOTDIR, syscall.EISDIR, syscall.ELOOP, syscall.ENOTEMPTY, syscall.EEXIST,
		syscall.EACCES, syscall.EPERM, syscall.EROFS} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// published turns the error of a write into DIR/batches or DIR into nil when the trainer's
// tampering caused it (logged once; the next sweep tries again).
func (d *Daemon) published(path string, err error) error {
	key := "publish " + path // apart from plainTarget's entry for the name, which it clears while the name is free
	if err == nil {
		delete(d.faults, key) // a later fault is logged again
		return nil
	}
	if !tampered(err) {
		return err
	}
	if d.faults.once(key, errText(err)) { // the cause alone: the message names a new temporary file each time
		d.log.Error("cannot publish; serving goes on, and it is tried again at every sweep", "path", path, "err", err)
	}
	return nil
}

// errText is the cause of a path error without the path (a temporary file's random name).
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err.Error()
	}
	return err.Error()
}

// kindOf names what a file system entry is, for messages.
func kindOf(fi fs.FileInfo) string { return fsutil.TypeName(fi.Mode()) }
