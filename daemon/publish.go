package daemon

import (
	"bytes"
	"io"
	"path/filepath"

	"github.com/envsched/envsched/fsutil"
)

// writeAtomic publishes data as dir/name through fsutil.WriteAtomic (a temporary file named by
// fsutil.TempName in dir, created anew and never through a symbolic link, fsync, rename, fsync
// of dir), with the crash points of a publication between the steps. A reader sees the old
// file or the new one, never a part. crash may be nil.
func writeAtomic(dir, name string, data []byte, crash *crasher) error {
	return fsutil.WriteAtomic(filepath.Join(dir, name), 0o644, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, publishHooks(crash))
}

// publishHooks are the crash points of a publication. crash may be nil.
func publishHooks(crash *crasher) fsutil.Hooks {
	return fsutil.Hooks{
		BeforeRename:  func() { crash.at(CrashBeforeRename) },
		BeforeDirSync: func() { crash.at(CrashBeforeDirSync) },
	}
}

// publishBatch publishes answer as dir/name: file, the temporary copy written early, when there
// is one, else (or when the folder was made again since and the copy is gone with it) a new
// atomic write. One publication reaches each crash point once: a retry after the early copy's
// failed rename does not pass CrashBeforeRename again (the crash tests count the reaches).
func publishBatch(dir, name string, answer []byte, file *fsutil.Prepared, crash *crasher) error {
	hooks := publishHooks(crash)
	var err error
	if file != nil {
		err = file.Publish(hooks)
		hooks.BeforeRename = nil
	}
	if file == nil || tampered(err) { // the folder made again since: its temporary file is gone
		err = fsutil.WriteAtomic(filepath.Join(dir, name), 0o644, func(w io.Writer) error {
			_, err := w.Write(answer)
			return err
		}, hooks)
	}
	return err
}

// sameContent reports whether path holds exactly data (a missing file does not). A file of
// another size is not read: whatever was put there (a sparse 8 GB file in place of an error
// file) is never read whole, which made the daemon run out of memory.
func sameContent(path string, data []byte) bool {
	f, err := fsutil.OpenRegular(path) // a FIFO put there must not block the daemon
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() != int64(len(data)) {
		return false
	}
	old, err := io.ReadAll(io.LimitReader(f, int64(len(data))+1))
	return err == nil && bytes.Equal(old, data)
}
