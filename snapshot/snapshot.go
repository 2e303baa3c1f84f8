package snapshot

import (
	"errors"
	"path/filepath"
	"regexp"
	"time"
)

// Folder is the folder of the exchange directory in which readers and the daemon exchange
// snapshot requests and copies.
const Folder = "snapshots"

// File suffixes in Folder.
const (
	wantSuffix  = ".want"  // a reader asks for a copy
	dbSuffix    = ".db"    // the daemon's answer: a whole database file
	errorSuffix = ".error" // the daemon could not make the copy; the file says why
)

// Defaults of the options; a zero field takes them.
const (
	// DefaultPollInterval is how often Serve looks for requests and a reader for the answer.
	DefaultPollInterval = 100 * time.Millisecond
	// DefaultWait is how long a reader waits for the daemon's copy.
	DefaultWait = 2 * time.Minute
	// DefaultLockTimeout is how long a reader tries to open the database directly before it
	// asks the daemon for a copy.
	DefaultLockTimeout = 50 * time.Millisecond
	// DefaultMaxAge is the age after which Serve removes anything left in Folder (the
	// requests, copies and temporary files of readers that died).
	DefaultMaxAge = 15 * time.Minute
)

// ErrNoServer means the database is held by a process that does not serve snapshots (an
// `envsched ingest`, or a daemon without the snapshot hook), or that did not answer in time.
// It wraps storage.ErrLocked in the errors Open returns.
var ErrNoServer = errors.New("no snapshot server answered")

// ErrFailed means the daemon answered a request with an error file.
var ErrFailed = errors.New("the daemon could not write a snapshot")

// namePattern is the shape of a request name; anything else in Folder is left alone.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// validName reports whether name can name a snapshot request.
func validName(name string) bool { return namePattern.MatchString(name) }

// Dir is the snapshot folder of the exchange directory dir.
func Dir(dir string) string { return filepath.Join(dir, Folder) }
