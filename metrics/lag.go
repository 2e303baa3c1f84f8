package metrics

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/envsched/envsched/storage"
)

// lag is what is on disk and not yet in the database.
type lag struct {
	bytes int64
	files int
}

type fileID struct{ dev, ino uint64 }

// measureLag compares every rollout and catalogue file with its committed state: a file not
// tracked yet lags by its size; a tracked one by the bytes past its committed offset (its
// whole size when it shrank, which starts a new generation), and not at all when its size
// and modification time are those committed (a catalogue file read whole).
func measureLag(src Source, dir string) (lag, error) {
	states, err := src.Files()
	if err != nil {
		return lag{}, err
	}
	known := make(map[fileID]storage.FileState, len(states))
	for _, s := range states {
		if !s.Gone {
			known[fileID{s.Dev, s.Ino}] = s
		}
	}
	var l lag
	for _, sub := range []string{"rollouts", "catalog"} {
		err := filepath.WalkDir(filepath.Join(dir, sub), func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return nil // a file or folder that vanished meanwhile
			}
			if e.Type().IsRegular() && candidate(sub, e.Name()) {
				l.add(p, known)
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return l, err
		}
	}
	return l, nil
}

// candidate reports whether a file is one the ingester reads (PROTOCOL.md: names starting with
// "." or ending in ".tmp" are unfinished writes).
func candidate(sub, name string) bool {
	if strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".tmp") {
		return false
	}
	if sub == "rollouts" {
		return strings.HasSuffix(name, ".jsonl")
	}
	return strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".parquet")
}

func (l *lag) add(path string, known map[fileID]storage.FileState) {
	fi, err := os.Stat(path)
	if err != nil {
		return
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	size := fi.Size()
	behind := size
	if s, ok := known[fileID{uint64(st.Dev), st.Ino}]; ok {
		switch {
		case s.Size == size && s.ModTime == fi.ModTime().UnixNano():
			behind = 0
		case size >= s.Offset:
			behind = size - s.Offset
		}
	}
	if behind > 0 {
		l.bytes += behind
		l.files++
	}
}
