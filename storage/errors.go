package storage

import (
	"errors"
	"strings"

	"github.com/envsched/envsched/fsutil"
)

// Sentinel errors; callers compare with errors.Is.
var (
	// ErrLocked means another process holds the database (bbolt's file lock did not come free
	// within the open timeout). main turns it into exit code 3.
	ErrLocked = errors.New("database file is locked by another process")
	// ErrSchemaNewer means the database was written by a newer envsched.
	ErrSchemaNewer = errors.New("database schema is newer than this envsched")
	// ErrNotEnvsched means the file is a bbolt database but not envsched's: it has no schema.
	ErrNotEnvsched = errors.New("not an envsched database")
	// ErrNotFound means a key that was asked for is not stored.
	ErrNotFound = errors.New("not found")
)

// ErrConfigMismatch means Open was asked for a configuration (reward range, decay) other than
// the one the database was created with; the stored statistics would mean something else.
var ErrConfigMismatch = errors.New("configuration differs from the one the database was created with")

// ErrCorrupt means a stored value could not be decoded.
var ErrCorrupt = errors.New("stored value is corrupt")

// lockedError is ErrLocked naming the database, said once, and the processes that hold its lock
// where the system tells them: "database file PATH is locked by another process (pid 4242,
// envsched)". It said "another envsched process" whoever held the lock (a backup tool, an editor,
// a Python script opening the file with bbolt's lock).
type lockedError struct {
	path    string
	holders []fsutil.Holder
}

func (e lockedError) Error() string {
	msg := "database file " + e.path + " is locked by another process"
	if len(e.holders) == 0 {
		return msg + " (which one, the system does not say)"
	}
	var who []string
	for _, h := range e.holders {
		who = append(who, h.String())
	}
	return msg + " (" + strings.Join(who, "; ") + ")"
}

func (e lockedError) Unwrap() error { return ErrLocked }
