package fsutil

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// File is one file of WriteFilesAtomic: its name in the folder and its contents.
type File struct {
	Name string
	Data []byte
}

// manyWorkers is how many temporary files WriteFilesAtomic writes and fsyncs at once: the file
// system commits fsyncs that overlap together, so many small files cost a few commits, not one
// each.
const manyWorkers = 16

// WriteFilesAtomic publishes each file in dir as WriteFileAtomic would, with the same guarantee
// for each (a reader sees the old file or the whole new one; after a nil error the new one
// survives a crash), at a fraction of the cost for many small files: every temporary file is
// written and fsync'd first (up to manyWorkers at once), then each is renamed over its target,
// then dir is fsync'd once for all. errs[i] is the error of files[i]; a file whose temporary file
// could not be written is not renamed (its target is unchanged, the temporary file removed). An
// error of the final folder fsync is the error of every file renamed.
func WriteFilesAtomic(dir string, files []File, perm os.FileMode) []error {
	errs := make([]error, len(files))
	tmps := make([]string, len(files))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(manyWorkers, len(files)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				tmps[i], errs[i] = stage(dir, files[i], perm)
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	renamed := false
	for i, f := range files {
		if errs[i] != nil {
			continue
		}
		if err := os.Rename(tmps[i], filepath.Join(dir, f.Name)); err != nil {
			os.Remove(tmps[i])
			errs[i] = fmt.Errorf("rename %s: %w", filepath.Join(dir, f.Name), err)
			continue
		}
		renamed = true
	}
	if !renamed {
		return errs
	}
	if err := SyncDir(dir); err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
	}
	return errs
}

// stage writes f to a new temporary file beside its target and fsyncs it (Prepare), returning
// its path; on an error nothing is left behind.
func stage(dir string, f File, perm os.FileMode) (string, error) {
	p, err := Prepare(filepath.Join(dir, f.Name), perm, func(w io.Writer) error {
		_, err := w.Write(f.Data)
		return err
	})
	if err != nil {
		return "", err
	}
	return p.tmp, nil
}
