package daemon

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/envsched/envsched/fsutil"
)

// writeAtomic publishes data as dir/name the way fsutil.WriteFileAtomic does (a temporary file
// named by fsutil.TempName in dir, fsync, rename, fsync of dir), with the crash points of a
// publication between the steps. A reader sees the old file or the new one, never a part. The
// temporary file is created anew (O_EXCL) and never through a symbolic link, so nothing outside
// dir is written. crash may be nil.
func writeAtomic(dir, name string, data []byte, crash *crasher) error {
	final := filepath.Join(dir, name)
	tmp, err := writeTemp(dir, name, data)
	if err != nil {
		return err
	}
	crash.at(CrashBeforeRename)
	if err := os.Rename(tmp, final); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("publish %s: %w", final, err)
	}
	crash.at(CrashBeforeDirSync)
	return fsutil.SyncDir(dir)
}

// writeTemp writes data to a new temporary file for name in dir, fsyncs it and returns its path.
// On error the file is removed.
func writeTemp(dir, name string, data []byte) (string, error) {
	var rnd [8]byte
	rand.Read(rnd[:])
	path := filepath.Join(dir, fsutil.TempName(name, hex.EncodeToString(rnd[:])))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return "", fmt.Errorf("create %s: %w", path, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return path, nil
}

// sameContent reports whether path holds exactly data (a missing file does not).
func sameContent(path string, data []byte) bool {
	old, err := os.ReadFile(path)
	return err == nil && bytes.Equal(old, data)
}
