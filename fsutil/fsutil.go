// Package fsutil writes files atomically and durably: a reader sees the old file or the whole new
// one, never a part, and after WriteFileAtomic returns the new file survives a crash.
//
// A temporary file is named ".NAME.tmp-RANDOM" in the folder of its target. It starts with a dot
// and contains ".tmp", so every reader of the exchange directory ignores it (PROTOCOL.md), and
// SweepTemp can tell it from anything else. A temporary file is left behind only when the process
// dies during a write; SweepTemp removes such files at start-up.
package fsutil

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// tmpMark separates a target's name from the random suffix in a temporary file's name.
const tmpMark = ".tmp-"

// Hooks are called between the steps of an atomic write, for tests that make the process die
// there (the daemon's crash points). A nil hook is skipped.
type Hooks struct {
	BeforeRename  func() // the temporary file is written, fsync'd and closed; path is unchanged
	BeforeDirSync func() // the rename is done; the folder is not yet fsync'd
}

// WriteFileAtomic replaces path with data, with permissions perm, in these steps:
//
//  1. create the temporary file .NAME.tmp-RANDOM in path's folder;
//  2. write data and fsync the file;
//  3. close it and set perm (not reduced by the umask);
//  4. rename it over path (atomic on POSIX file systems);
//  5. fsync the folder, so that the rename itself is durable.
//
// The temporary name is 22 bytes longer than the target's, which must leave room for that under
// the file system's name limit (255 bytes on most). On an error before the rename the temporary
// file is removed and path is unchanged. An error from step 5 means that path holds data but
// may not survive a crash.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	return WriteAtomic(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, Hooks{})
}

// WriteAtomic is WriteFileAtomic with the contents written by fill (streamed: an export, a
// database copy) and hooks between the steps. An error of fill comes back wrapped (errors.Is
// finds it), after the temporary file is removed.
func WriteAtomic(path string, perm os.FileMode, fill func(io.Writer) error, h Hooks) error {
	return Replace(path, func(tmp string) error { return writeNew(tmp, perm, fill) }, h)
}

// Replace is the frame of every atomic write: it names a temporary file beside path
// (TempName), calls fill with that path to create the whole file there and make it durable, then
// renames it over path and fsyncs the folder. Use it directly when something else must create the
// file (bbolt's compaction); WriteAtomic otherwise. The temporary file is removed on any error
// before the rename, and path is then unchanged.
func Replace(path string, fill func(tmp string) error, h Hooks) error {
	p, err := prepareWith(path, fill)
	if err != nil {
		return err
	}
	return p.Publish(h)
}

// Prepared is the first half of an atomic write: the whole temporary file, written, fsync'd
// and closed beside its target, which is not yet changed. Publish makes it the target; Discard
// removes it. Splitting the write lets a caller do it while something it must wait for before
// the file may be seen (an answer's database commit) is under way.
type Prepared struct {
	tmp, path string
	done      bool // published or discarded
}

// Prepare does steps 1 to 3 of WriteAtomic (the temporary file, written by fill and
// fsync'd); on an error the temporary file is removed.
func Prepare(path string, perm os.FileMode, fill func(io.Writer) error) (*Prepared, error) {
	return prepareWith(path, func(tmp string) error { return writeNew(tmp, perm, fill) })
}

func prepareWith(path string, fill func(tmp string) error) (*Prepared, error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp := tempPath(dir, name)
	if err := fill(tmp); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	return &Prepared{tmp: tmp, path: path}, nil
}

// Publish does steps 4 and 5 of WriteAtomic (rename over the target, fsync of its folder),
// with the hooks between. On a failed rename the temporary file is removed. Publish and
// Discard may each be called once; the second call of either does nothing. A nil Prepared
// publishes nothing.
func (p *Prepared) Publish(h Hooks) error {
	if p == nil || p.done {
		return nil
	}
	p.done = true
	call(h.BeforeRename)
	if err := os.Rename(p.tmp, p.path); err != nil {
		os.Remove(p.tmp)
		return fmt.Errorf("rename %s: %w", p.path, err)
	}
	call(h.BeforeDirSync)
	return SyncDir(filepath.Dir(p.path))
}

// Discard removes the temporary file of a Prepared not published. A nil Prepared is fine.
func (p *Prepared) Discard() {
	if p == nil || p.done {
		return
	}
	p.done = true
	os.Remove(p.tmp)
}

func call(f func()) {
	if f != nil {
		f()
	}
}

// WriteNew creates path anew (never through a symbolic link, never over an existing file),
// writes it through fill, fsyncs, closes and chmods it to perm: what WriteAtomic does to its
// temporary file, for a Replace whose caller must know that file's name.
func WriteNew(path string, perm os.FileMode, fill func(io.Writer) error) error {
	return writeNew(path, perm, fill)
}

// writeNew creates path anew (never through a symbolic link, never over an existing file),
// writes it through fill, fsyncs, closes and chmods it to perm.
func writeNew(path string, perm os.FileMode, fill func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("create temporary file %s: %w", path, err)
	}
	err = fill(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(path, perm)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// tempPath is a fresh temporary file's path for the target name in dir (TempName with a random
// suffix).
func tempPath(dir, name string) string {
	var rnd [8]byte
	rand.Read(rnd[:])
	return filepath.Join(dir, TempName(name, hex.EncodeToString(rnd[:])))
}

// TempName returns the name of a temporary file for the target name with the given suffix:
// ".NAME.tmp-SUFFIX".
func TempName(name, suffix string) string {
	return "." + name + tmpMark + suffix
}

// IsTemp reports whether name (a base name) is a temporary file of this package.
func IsTemp(name string) bool {
	i := strings.LastIndex(name, tmpMark)
	return len(name) > 1 && name[0] == '.' && i > 1 && i+len(tmpMark) < len(name)
}

// SyncDir fsyncs the folder dir, making the creation, rename and removal of its entries durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	return nil
}

// SweepTemp removes the temporary files of this package (IsTemp) directly in dir; subfolders
// and every other file are left alone. It is meant for start-up, when no write of this process
// is in progress: another process writing into dir at the same time would lose its temporary file.
// It returns how many files it removed.
func SweepTemp(dir string) (removed int, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("sweep %s: %w", dir, err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !IsTemp(e.Name()) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, fmt.Errorf("sweep %s: %w", dir, err)
		}
		removed++
	}
	if removed > 0 {
		return removed, SyncDir(dir)
	}
	return 0, nil
}
