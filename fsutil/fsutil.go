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
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// tmpMark separates a target's name from the random suffix in a temporary file's name.
const tmpMark = ".tmp-"

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
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := createTemp(dir, name)
	if err != nil {
		return err
	}
	if err := writeSync(tmp, data, perm); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("rename %s: %w", path, err)
	}
	return SyncDir(dir)
}

// createTemp creates a new temporary file for the target name in dir.
func createTemp(dir, name string) (*os.File, error) {
	var rnd [8]byte
	for range 10 {
		rand.Read(rnd[:])
		p := filepath.Join(dir, TempName(name, hex.EncodeToString(rnd[:])))
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("create temporary file for %s: %w", filepath.Join(dir, name), err)
		}
		return f, nil
	}
	return nil, fmt.Errorf("create temporary file for %s: names exhausted", filepath.Join(dir, name))
}

// writeSync writes data to f, fsyncs, closes and chmods it. It closes f on every path.
func writeSync(f *os.File, data []byte, perm os.FileMode) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), perm)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", f.Name(), err)
	}
	return nil
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
