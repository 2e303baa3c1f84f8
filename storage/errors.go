package storage

import "errors"

// Sentinel errors; callers compare with errors.Is.
var (
	// ErrLocked means another process holds the database (bbolt's file lock did not come free
	// within the open timeout). main turns it into exit code 3.
	ErrLocked = errors.New("database is held by another envsched process")
	// ErrSchemaNewer means the database was written by a newer envsched.
	ErrSchemaNewer = errors.New("database schema is newer than this envsched")
	// ErrNotFound means a key that was asked for is not stored.
	ErrNotFound = errors.New("not found")
)

// ErrConfigMismatch means Open was asked for a configuration (reward range, decay) other than
// the one the database was created with; the stored statistics would mean something else.
var ErrConfigMismatch = errors.New("configuration differs from the one the database was created with")

// ErrCorrupt means a stored value could not be decoded.
var ErrCorrupt = errors.New("stored value is corrupt")

// lockedError is ErrLocked naming the database, said once: "database PATH is held by another
// envsched process".
type lockedError struct{ path string }

func (e lockedError) Error() string {
	return "database " + e.path + " is held by another envsched process"
}

func (e lockedError) Unwrap() error { return ErrLocked }
